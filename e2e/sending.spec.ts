import { expect, test } from "./fixtures";
import { apiPost, uploadCsv } from "./support/api";

// CONTRACT 11 in the browser: preview from the editor, read a rendered email, send exactly the preview, watch the
// progress count rise, open the recipients table, then unsubscribe through the link the email carries.
// The server paces its local mailbox (MAILBOX_RATE_PER_SECOND in playwright.config.ts) so progress can be watched.

const ROWS = 3000;

test("preview, send, progress, recipients, unsubscribe", async ({ page, signedIn, mailbox, shot }) => {
  // 3,000 emails paced at 2 batches/s take 15 s by design, on top of the preview and the onboarding.
  test.setTimeout(300_000);
  const tag = signedIn.email.split("@")[0];
  const lines = ["name,email", ...Array.from({ length: ROWS }, (_, i) => `Person ${i},p${i}-${tag}@example.com`), `Again,P0-${tag}@example.com`];
  const { uploadId } = await uploadCsv(page, "people.csv", lines.join("\n") + "\n");
  const graph = {
    nodes: [
      { id: "start", type: "TRIGGER", data: {}, position: { x: 0, y: 0 } },
      { id: "src", type: "DATA_SOURCE", data: { uploadId }, position: { x: 0, y: 160 } },
      {
        id: "mail",
        type: "OUTPUT",
        data: { forEach: "{{src.rows}}", to: "{{item.email}}", subject: "Hi {{item.name}}", body: "Hello {{item.name}}.\nUnsubscribe: {{unsubscribeUrl}}" },
        position: { x: 0, y: 320 },
      },
    ],
    edges: [
      { source: "start", target: "src" },
      { source: "src", target: "mail" },
    ],
  };
  const workflow = await apiPost<{ id: string }>(page, "/api/workflows", { name: `Newsletter ${tag}`, graph });

  await page.goto(`/workflows/${workflow.id}`);
  await page.getByTestId("preview").click();
  const dialog = page.getByTestId("preview-dialog");
  await expect(dialog.getByTestId("preview-planned")).toHaveText("3,000", { timeout: 60_000 });
  await expect(dialog.getByTestId("preview-duplicates")).toHaveText("1");
  await expect(dialog.getByTestId("preview-suppressed")).toHaveText("0");
  await expect(dialog.getByTestId("preview-to")).toHaveText(`p0-${tag}@example.com`);
  await expect(dialog.getByTestId("preview-subject")).toHaveText("Hi Person 0");
  await expect(dialog.getByTestId("preview-body")).toContainText("Hello Person 0.");
  await dialog.getByTestId("preview-next").click();
  await expect(dialog.getByTestId("preview-subject")).toHaveText("Hi Person 1");
  await expect(dialog.getByTestId("preview-body")).toContainText("/api/unsubscribe/");
  await shot("preview-dialog");

  await dialog.getByTestId("preview-send").click();
  await expect(page).toHaveURL(/\/runs\/run_/);
  const progress = page.getByTestId("send-progress-mail");
  await expect(progress).toBeVisible({ timeout: 60_000 });
  const first = Number(await progress.getAttribute("data-sent"));
  await expect(progress).toHaveAttribute("data-total", "3000");
  await expect.poll(async () => Number((await progress.getAttribute("data-sent", { timeout: 1000 }).catch(() => null)) ?? 3000), { timeout: 30_000 }).toBeGreaterThan(first);
  await shot("send-progress");
  await expect(page.getByTestId("run-status")).toHaveAttribute("data-status", "SUCCESS", { timeout: 60_000 });
  await expect(page.getByTestId("summary-emails-sent")).toHaveText("3000");
  await expect(page.getByTestId("summary-duplicates")).toHaveText("1");

  const recipients = page.getByTestId("recipients");
  await expect(recipients.getByTestId("recipients-filter-sent")).toContainText("3,000");
  await recipients.getByTestId("recipients-filter-duplicate").click();
  await expect(recipients.getByTestId("recipient-row")).toHaveCount(1);
  await expect(recipients.getByTestId("recipient-row")).toContainText(`p0-${tag}@example.com`);
  await recipients.getByTestId("recipients-filter-all").click();
  await expect(recipients.getByTestId("recipient-row")).toHaveCount(50);
  await recipients.getByTestId("recipients-next").click();
  await expect(recipients.getByTestId("recipients-range")).toHaveText("51–100 of 3,001");
  await shot("recipients");

  const address = `p7-${tag}@example.com`;
  await mailbox.goto(address);
  await mailbox.items(address).first().click();
  const link = await page.getByTestId("mailbox-unsubscribe").getAttribute("href");
  expect(link).toMatch(/\/api\/unsubscribe\//);
  await page.goto(link!);
  await expect(page.getByRole("heading", { name: "Unsubscribe" })).toBeVisible();
  await expect(page.getByText(address)).toBeVisible();
  await page.getByRole("button", { name: "Unsubscribe" }).click();
  await expect(page.getByRole("heading", { name: "You are unsubscribed" })).toBeVisible();

  await page.goto("/suppressions");
  await page.getByTestId("suppressions-search").fill(`p7-${tag}`);
  await expect(page.getByTestId("suppression-row")).toHaveCount(1);
  await expect(page.getByTestId("suppression-reason")).toHaveText("unsubscribed");
  await shot("suppressions");
});
