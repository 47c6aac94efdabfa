import { expect, test } from "./fixtures";
import { apiPost, origin, people, thanksGraph, uploadCsv, waitForRun } from "./support/api";

// Issue 17, point 9: the controls of the other features sit where a person looks for them. The features themselves
// are exercised in depth by sending.spec (preview, send, progress, recipients), runs.spec (queue, cancel, retry) and
// triggers.spec (schedule, hooks); this spec checks their places: the editor's toolbar, the node inspector, the
// TRIGGER's panel, the canvas node, the run page — and that no list page scrolls sideways on a phone.

test("preview, run, test-this-node, schedule, hooks, progress, retry and recipients are where a person expects them", async ({ page, signedIn, editor }) => {
  const tag = signedIn.email.split("@")[0];
  const { uploadId } = await uploadCsv(page, "people.csv", people(tag, 4000));
  const workflow = await apiPost<{ id: string }>(page, "/api/workflows", { name: `Controls ${tag}`, graph: thanksGraph(uploadId, { expr: "rating >= 0" }) });

  // The editor's toolbar: Save, Preview and Run side by side, Preview just before Run.
  await page.goto(`/workflows/${workflow.id}`);
  const save = page.getByTestId("save");
  const preview = page.getByTestId("preview");
  const run = page.getByTestId("run");
  await expect(save).toBeVisible();
  await expect(preview).toBeVisible();
  await expect(run).toBeVisible();
  const [s, p, r] = await Promise.all([save.boundingBox(), preview.boundingBox(), run.boundingBox()]);
  expect(Math.abs(p!.y - r!.y)).toBeLessThan(8);
  expect(Math.abs(s!.y - r!.y)).toBeLessThan(8);
  expect(p!.x).toBeLessThan(r!.x);
  expect(r!.x - (p!.x + p!.width)).toBeLessThan(40);

  // The inspector of a node offers "Test this node"; the TRIGGER's panel holds the schedule and the hooks.
  await editor.select("happy");
  await expect(page.getByTestId("test-node")).toBeVisible();
  await editor.select("start");
  const trigger = page.getByTestId("trigger-panel");
  await expect(trigger.getByTestId("schedule-cron")).toBeVisible();
  await expect(trigger.getByTestId("hook-create")).toBeVisible();

  // Run from the toolbar: the OUTPUT node on the canvas shows its progress while it sends (the mailbox is paced).
  await run.click();
  const progress = page.getByTestId("node-mail").getByTestId("send-progress-canvas-mail");
  await expect(progress).toBeVisible({ timeout: 60_000 });
  await expect(progress).toHaveAttribute("data-total", "4003");

  // A second run waits in the queue: its page shows the position and Cancel, next to the run's status.
  const queued = await apiPost<{ runId: string }>(page, `/api/workflows/${workflow.id}/run`, undefined, 202);
  await page.goto(`/runs/${queued.runId}`);
  await expect(page.getByTestId("run-queue-position")).toBeVisible();
  await expect(page.getByTestId("run-cancel")).toBeVisible();
  await page.getByTestId("run-cancel").click();
  await expect(page.getByTestId("run-status")).toHaveAttribute("data-status", "FAILED");
  // …and once it failed (cancelled), Retry takes Cancel's place.
  await expect(page.getByTestId("run-retry")).toBeVisible();
  await expect(page.getByTestId("run-cancel")).toHaveCount(0);

  // The first run's page: the recipients table of its OUTPUT node, below the summary.
  const runs = (await (await page.request.get(`/api/workflows/${workflow.id}/runs`, { headers: { origin: origin(page) } })).json()) as { items: { runId: string }[] };
  const first = runs.items.at(-1)!.runId;
  await waitForRun(page, first, "SUCCESS");
  await page.goto(`/runs/${first}`);
  const summary = await page.getByTestId("run-summary").boundingBox();
  const recipients = page.getByTestId("recipients");
  await expect(recipients).toBeVisible();
  expect((await recipients.boundingBox())!.y).toBeGreaterThan(summary!.y);
  await expect(recipients.getByTestId("recipients-filter-sent")).toContainText("4,003");
});

test("at 390 px wide no page of the app scrolls sideways", async ({ page, signedIn, shot }) => {
  const tag = signedIn.email.split("@")[0];
  const { uploadId } = await uploadCsv(page, "a-rather-long-file-name-for-a-phone-screen.csv", people(tag));
  const workflow = await apiPost<{ id: string }>(page, "/api/workflows", { name: `A workflow with a long name for a small screen ${tag}`, graph: thanksGraph(uploadId) });
  const { runId } = await apiPost<{ runId: string }>(page, `/api/workflows/${workflow.id}/run`, undefined, 202);
  await waitForRun(page, runId, "SUCCESS");
  await apiPost(page, "/api/suppressions", { emails: [`someone-with-a-long-address-${tag}@example.com`] }, 200);

  await page.setViewportSize({ width: 390, height: 844 });
  for (const path of ["/workflows", "/runs", "/uploads", "/suppressions", "/settings", "/mailbox", `/runs/${runId}`]) {
    await page.goto(path);
    await page.waitForLoadState("networkidle");
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(width, `${path} is ${width} px wide`).toBeLessThanOrEqual(390);
    await shot(`phone${path.replace(/\/run_.*/, "-run").replaceAll("/", "-")}`);
  }
  // The workflows list keeps its content and actions on a phone.
  await page.goto("/workflows");
  await expect(page.getByText(`A workflow with a long name for a small screen ${tag}`)).toBeVisible();
});
