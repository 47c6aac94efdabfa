import { expect, test } from "./fixtures";

// Triggers (CONTRACT 13) in the editor: a schedule with its human reading and next times, and an inbound hook that a
// plain HTTP client (fetch, as curl would) calls to start a run that then shows in the hook's last deliveries.
test("set a schedule on the TRIGGER and read its next times; create a hook, POST to it, watch the run appear", async ({ page, signedIn: _signedIn, editor, shot }) => {
  await page.getByTestId("try-demo").first().click();
  await expect(page).toHaveURL(/\/workflows\/wf_/);
  const workflowId = new URL(page.url()).pathname.split("/").pop()!;
  await editor.select("trigger");
  await expect(page.getByTestId("trigger-curl")).toContainText(`/api/workflows/${workflowId}/run`);

  // Schedule: the reading and the next three times follow the typing; a sixth field is refused before saving.
  await editor.field("schedule-cron").fill("* * * * * *");
  await expect(page.getByTestId("schedule-cron-error")).toContainText("exactly 5 fields");
  await expect(editor.field("schedule-save")).toBeDisabled();
  await editor.field("schedule-cron").fill("0 9 * * 1-5");
  await editor.field("schedule-timezone").fill("Europe/Paris");
  await expect(page.getByTestId("schedule-reading")).toHaveText("At 09:00, Monday through Friday (Europe/Paris)");
  const next = page.getByTestId("schedule-next").locator("li");
  await expect(next).toHaveCount(3);
  for (const text of await next.allTextContents()) {
    expect(text).toContain("09:00");
    expect(text).not.toMatch(/Sat|Sun/);
  }
  await editor.field("schedule-save").click();
  await expect(page.getByTestId("schedule-status")).toContainText("Next run:");
  await expect(page.getByTestId("schedule-status")).toContainText("09:00 (Europe/Paris)");
  await shot("trigger-schedule");

  // Saved on the workflow: a reload shows it again, with the same next run.
  await page.reload();
  await editor.select("trigger");
  await expect(editor.field("schedule-cron")).toHaveValue("0 9 * * 1-5");
  await expect(page.getByTestId("schedule-status")).toContainText("09:00 (Europe/Paris)");

  // Inbound hook: the URL is shown once; a delivery from outside the browser starts a run.
  await editor.field("hook-create").click();
  const url = (await page.getByTestId("hook-url").textContent())!;
  expect(url).toMatch(/\/api\/hooks\/fmh_[A-Za-z0-9_-]{43}$/);
  const delivery = { method: "POST", headers: { "content-type": "application/json", "webhook-id": "msg_e2e_1" }, body: JSON.stringify({ team: "e2e" }) };
  const first = await fetch(url, delivery);
  expect(first.status).toBe(202);
  const { runId } = (await first.json()) as { runId: string };
  const retried = await fetch(url, delivery);
  expect(((await retried.json()) as { runId: string }).runId).toBe(runId);

  await expect(page.getByTestId("hook-delivery")).toHaveCount(2, { timeout: 15_000 });
  await expect(page.getByTestId("hook-delivery-run").first()).toHaveAttribute("href", `/runs/${runId}`);
  await shot("trigger-hooks");
  await page.getByTestId("hook-delivery-run").first().click();
  await expect(page).toHaveURL(new RegExp(`/runs/${runId}$`));
  await expect(page.getByTestId("run-status")).toHaveAttribute("data-status", "SUCCESS", { timeout: 60_000 });

  // Revoked: the URL answers 404.
  await page.goBack();
  await editor.select("trigger");
  await editor.field("hook-revoke").click();
  await expect(page.getByTestId("hook-item")).toHaveCount(0);
  expect((await fetch(url, delivery)).status).toBe(404);
});
