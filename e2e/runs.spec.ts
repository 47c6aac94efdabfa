import { expect, test } from "./fixtures";
import { apiPost, origin, people, thanksGraph, uploadCsv, waitForRun } from "./support/api";

// CONTRACT 12 in the browser: the all-runs page lists every workflow's runs with the queue position of a waiting run;
// Cancel stops a RUNNING run (FAILED "Cancelled") and the next one starts; Retry of a FAILED run opens the new run.
// The server paces its local mailbox at 5 calls/s (playwright.config.ts): batches of 100, so a 9,000-email run takes
// ~18 s — long enough to cancel it from the page — and stays under the default daily quota of 10,000.

test("all runs: queue position, cancel a running run, retry a failed one", async ({ page, signedIn, shot }) => {
  const tag = signedIn.email.split("@")[0];
  const { uploadId } = await uploadCsv(page, "people.csv", people(tag, 9000));
  const workflow = await apiPost<{ id: string }>(page, "/api/workflows", { name: `Long send ${tag}`, graph: thanksGraph(uploadId, { expr: "rating >= 0" }) });
  const first = await apiPost<{ runId: string }>(page, `/api/workflows/${workflow.id}/run`, undefined, 202);
  const second = await apiPost<{ runId: string }>(page, `/api/workflows/${workflow.id}/run`, undefined, 202);
  await waitForRun(page, first.runId, "RUNNING");

  await page.goto("/runs");
  const rows = page.getByTestId("runs-row");
  const running = rows.filter({ has: page.locator(`[href="/runs/${first.runId}"]`) });
  const waiting = rows.filter({ has: page.locator(`[href="/runs/${second.runId}"]`) });
  await expect(waiting.getByTestId("run-queue-position")).toHaveText("next in queue");
  await running.getByTestId("run-cancel").click();
  await expect(running).toContainText(`Long send ${tag}`);
  await expect(waiting.getByTestId("run-trigger")).toHaveText("Manual");
  await waitForRun(page, first.runId, "FAILED");
  await expect(running).toContainText("Cancelled");
  await expect(running.getByTestId("run-retry")).toBeVisible();
  await shot("runs-all");
  // The next run starts right after the cancel; cancel it too so the mailbox is not kept busy.
  await expect.poll(async () => ((await (await page.request.get(`/api/workflows/runs/${second.runId}`)).json()) as { status: string }).status).not.toBe("PENDING");
  await page.request.post(`/api/workflows/runs/${second.runId}/cancel`, { headers: { origin: origin(page) } });

  // Retry from the run page: a new run, linked to the failed one, that reuses the nodes that succeeded.
  await page.goto(`/runs/${first.runId}`);
  await page.getByTestId("run-retry").click();
  await expect(page).toHaveURL(/\/runs\/run_/);
  await expect(page).not.toHaveURL(new RegExp(first.runId));
  await expect(page.getByTestId("run-retry-of")).toHaveText(`retry of ${first.runId}`);
  await expect(page.getByTestId("run-trigger")).toHaveText("Retry");
  await expect(page.getByTestId("run-cancel")).toBeVisible();
  await page.getByTestId("run-cancel").click();
  await expect(page.getByTestId("run-status")).toHaveAttribute("data-status", "FAILED", { timeout: 30_000 });
  await expect(page.getByTestId("run-error")).toHaveText("Cancelled");
});
