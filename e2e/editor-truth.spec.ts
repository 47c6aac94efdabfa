import { expect, test } from "./fixtures";
import { apiPatch, apiPost, people, thanksGraph, uploadCsv, waitForRun } from "./support/api";

type Created = { id: string; version: number };

// Points 2–4 of issue 17: a run is drawn on the graph it ran; validation stays visible; save-time checks.
test("an old run opens on the version it ran, and the last run dims once the graph changes", async ({ page, signedIn, editor }) => {
  const tag = signedIn.email.split("@")[0];
  await page.goto("/workflows");
  const { uploadId } = await uploadCsv(page, "people.csv", people(tag));
  const workflow = await apiPost<Created>(page, "/api/workflows", { name: "Versions and runs", graph: thanksGraph(uploadId) });
  const first = await apiPost<{ runId: string }>(page, `/api/workflows/${workflow.id}/run`, undefined, 202);
  await waitForRun(page, first.runId);
  // Version 2 adds a node and changes the condition: the old run must not be painted on it.
  await apiPatch(page, `/api/workflows/${workflow.id}`, { graph: thanksGraph(uploadId, { expr: "rating >= 5", extraFilter: true }) });

  await page.goto(`/workflows/${workflow.id}?run=${first.runId}`);
  const banner = page.getByTestId("version-banner");
  await expect(banner).toHaveAttribute("data-version", "1");
  await expect(banner).toContainText("the graph this run ran");
  await expect(editor.node("happy")).toHaveAttribute("data-status", "SUCCESS");
  await expect(editor.node("vip")).toHaveCount(0);
  await expect(page.getByTestId("edge-count-happy->mail")).toHaveText("2 items");
  await editor.node("happy").click();
  await expect(page.getByTestId("node-run-card")).toBeVisible();

  await page.getByTestId("back-to-editing").click();
  await expect(banner).toHaveCount(0);
  await expect(editor.node("vip")).toBeVisible();
  await expect(editor.node("happy")).toHaveAttribute("data-status", "idle");
  await page.getByTestId("tab-run").click();
  await expect(page.getByTestId("run-other-version")).toContainText("version 1");

  // A run of today's graph is drawn on it; the first edit dims it and takes the counts off the edges.
  await editor.run();
  await expect(editor.status("mail")).toHaveAttribute("data-status", "SUCCESS", { timeout: 60_000 });
  await expect(page.getByTestId("edge-count-happy->mail")).toHaveText("1 item");
  await editor.select("happy");
  await editor.field("filter-expr").fill("rating >= 3");
  await expect(editor.node("happy")).toHaveAttribute("data-stale", "true");
  await expect(page.getByTestId("edge-count-happy->mail")).toHaveCount(0);
});

test("validation outranks run status, edge errors land in the edge panel, and condition suggestions work", async ({ page, signedIn, editor }) => {
  const tag = signedIn.email.split("@")[0];
  await page.goto("/workflows");
  const { uploadId } = await uploadCsv(page, "people.csv", people(tag));
  const workflow = await apiPost<Created>(page, "/api/workflows", { name: "Errors first", graph: thanksGraph(uploadId) });
  const run = await apiPost<{ runId: string }>(page, `/api/workflows/${workflow.id}/run`, undefined, 202);
  await waitForRun(page, run.runId);
  await page.goto(`/workflows/${workflow.id}?run=${run.runId}`);
  await expect(editor.status("happy")).toHaveAttribute("data-status", "SUCCESS");

  await editor.select("happy");
  await editor.field("filter-expr").fill("rating >=");
  await expect(editor.node("happy")).toHaveAttribute("data-invalid", "true");
  await expect(page.getByTestId("node-errors-happy")).toBeVisible();
  await expect(editor.status("happy")).toHaveAttribute("data-status", "SUCCESS");
  await editor.field("filter-expr").fill("rating >= 4");
  await expect(editor.node("happy")).not.toHaveAttribute("data-invalid", "true");

  // The edge's condition: its error is shown on the edge and in its panel, not on the node it leads to.
  await page.getByTestId("edge-count-src->happy").click(); // the label on the edge selects it
  const condition = page.getByTestId("edge-condition");
  await expect(condition).toBeVisible();
  const listId = await condition.getAttribute("list");
  expect(listId).toBeTruthy();
  await expect(page.locator(`datalist[id="${listId}"] option[value="src.rowCount"]`)).toHaveCount(1);
  await condition.fill("nope.count > 1");
  await expect(page.getByTestId("edge-panel")).toContainText('Unknown name "nope"');
  await expect(page.getByTestId("edge-label-src->happy")).toHaveAttribute("data-invalid", "true");
  await expect(page.getByTestId("validation-status")).toHaveAttribute("data-valid", "false");
  await expect(editor.node("happy")).not.toHaveAttribute("data-invalid", "true");
  await condition.fill("src.rowCount > 1");
  await expect(page.getByTestId("validation-status")).toHaveAttribute("data-valid", "true");
});

test("save-time checks: an unknown item column names the columns there are; forEach must be a list", async ({ page, signedIn, editor }) => {
  const tag = signedIn.email.split("@")[0];
  await page.goto("/workflows");
  const { uploadId } = await uploadCsv(page, "people.csv", people(tag));
  const workflow = await apiPost<Created>(page, "/api/workflows", { name: "Columns", graph: thanksGraph(uploadId) });
  await page.goto(`/workflows/${workflow.id}`);
  await expect(page.getByTestId("validation-status")).toHaveAttribute("data-valid", "true");

  await editor.select("mail");
  await editor.field("output-subject").fill("Thanks {{item.nmae}}");
  await expect(page.getByTestId("config-panel")).toContainText('people.csv has no column "nmae". Did you mean "name"? Available columns: name, email, rating');
  await expect(editor.node("mail")).toHaveAttribute("data-invalid", "true");
  // Saving a graph with a problem keeps it as a draft in the browser and says why the server did not store it.
  await page.getByTestId("save").click();
  await expect(page.getByTestId("draft-notice")).toContainText("no column");
  await expect(page.getByTestId("draft-notice")).not.toContainText("see `errors`");

  await editor.field("output-subject").fill("Thanks {{item.name}}");
  await editor.field("output-foreach").fill("{{start}}");
  await expect(page.getByTestId("config-panel")).toContainText("not a list");
  await editor.field("output-foreach").fill("{{happy.items}}");
  await expect(page.getByTestId("validation-status")).toHaveAttribute("data-valid", "true");
});
