import { expect, test } from "./fixtures";
import { apiPost, uploadCsv } from "./support/api";
import { startFakeSmtp, type FakeSmtp } from "../test/support/fake-smtp";

// Sending through an account's own SMTP server, in the browser: add the sender in Settings, send its test email,
// choose it in the OUTPUT panel, run, and read the recipients (a refused address shows as failed with the server's
// sentence). The SMTP server is a local smtp-server in the test process (the app's server reaches it on 127.0.0.1).

let smtp: FakeSmtp;
test.beforeAll(async () => {
  smtp = await startFakeSmtp();
});
test.afterAll(async () => {
  await smtp.close();
});

test("add an SMTP sender, test it, choose it on OUTPUT, run, see the recipients", async ({ page, signedIn, editor, shot }) => {
  test.setTimeout(240_000);
  const tag = signedIn.email.split("@")[0];
  await page.goto("/settings");
  const section = page.getByTestId("senders-section");
  await section.getByTestId("sender-name").fill("Our SMTP");
  await section.getByTestId("sender-from").fill(`Team <team-${tag}@example.com>`);
  await section.getByTestId("sender-host").fill("127.0.0.1");
  await section.getByTestId("sender-port").fill(String(smtp.port));
  await section.getByTestId("sender-add").click();
  const row = section.getByTestId("sender-row");
  await expect(row).toHaveCount(1);
  await expect(row).toContainText(`SMTP 127.0.0.1:${smtp.port}`);
  await row.getByTestId("sender-test").click();
  await expect(section.getByText("Test email sent through")).toBeVisible();
  expect(smtp.messages.map((m) => m.to[0])).toContain(signedIn.email.toLowerCase());
  await shot("senders-settings");

  smtp.refuse(`bad-${tag}@example.com`);
  const csv = ["name,email", `Ann,ann-${tag}@example.com`, `Bad,bad-${tag}@example.com`, `Cy,cy-${tag}@example.com`].join("\n") + "\n";
  const { uploadId } = await uploadCsv(page, "people.csv", csv);
  const workflow = await apiPost<{ id: string }>(page, "/api/workflows", {
    name: `SMTP ${tag}`,
    graph: {
      nodes: [
        { id: "start", type: "TRIGGER", data: {}, position: { x: 0, y: 0 } },
        { id: "src", type: "DATA_SOURCE", data: { uploadId }, position: { x: 0, y: 160 } },
        { id: "mail", type: "OUTPUT", data: { forEach: "{{src.rows}}", to: "{{item.email}}", subject: "Hi {{item.name}}", body: "Hello **{{item.name}}**", format: "markdown" }, position: { x: 0, y: 320 } },
      ],
      edges: [
        { source: "start", target: "src" },
        { source: "src", target: "mail" },
      ],
    },
  });
  await page.goto(`/workflows/${workflow.id}`);
  await editor.select("mail");
  const picker = page.getByTestId("output-sender");
  await expect(picker.locator("option", { hasText: "Our SMTP" })).toHaveCount(1);
  await picker.selectOption({ label: `Our SMTP — Team <team-${tag}@example.com>` });
  await editor.save();
  await shot("output-sender");
  const before = smtp.messages.length;
  await editor.run();
  await expect(editor.status("mail")).toHaveAttribute("data-status", "SUCCESS", { timeout: 90_000 });
  const runs = (await (await page.request.get(`/api/workflows/${workflow.id}/runs`)).json()) as { items: { runId: string }[] };
  await page.goto(`/runs/${runs.items[0].runId}`);
  await expect(page.getByTestId("run-status")).toHaveAttribute("data-status", "SUCCESS", { timeout: 30_000 });
  const recipients = page.getByTestId("recipients");
  await expect(recipients.getByTestId("recipients-filter-sent")).toContainText("2");
  await recipients.getByTestId("recipients-filter-failed").click();
  await expect(recipients.getByTestId("recipient-row")).toHaveCount(1);
  await expect(recipients.getByTestId("recipient-error")).toContainText("SMTP 550");
  await shot("recipients-failed");
  const delivered = smtp.messages.slice(before);
  expect(delivered.map((m) => m.to[0]).sort()).toEqual([`ann-${tag}@example.com`, `cy-${tag}@example.com`]);
  expect(delivered[0].raw).toContain("<strong>");
  expect(delivered[0].raw).toMatch(/Content-Type: text\/plain/i);
});
