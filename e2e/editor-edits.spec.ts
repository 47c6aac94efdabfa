import { expect, test } from "./fixtures";
import { apiPost, people, thanksGraph, uploadCsv } from "./support/api";

const edge = (page: import("@playwright/test").Page, id: string) => page.locator(`.react-flow__edge[data-id="${id}"]`);

test("Delete is one undo step: Ctrl+Z brings the node back with its edges", async ({ page, signedIn, editor, shot }) => {
  const tag = signedIn.email.split("@")[0];
  const { uploadId } = await uploadCsv(page, "people.csv", people(tag));
  const workflow = await apiPost<{ id: string }>(page, "/api/workflows", { name: "Undo delete", graph: thanksGraph(uploadId) });
  await page.goto(`/workflows/${workflow.id}`);
  await expect(page.getByTestId("validation-status")).toHaveAttribute("data-valid", "true");

  await editor.select("happy");
  await editor.node("happy").press("Delete");
  await expect(editor.node("happy")).toHaveCount(0);
  await expect(edge(page, "src->happy")).toHaveCount(0);
  await expect(edge(page, "happy->mail")).toHaveCount(0);
  // The problems the deletion makes show at once, not after a server round trip.
  await expect(page.getByTestId("validation-status")).toHaveAttribute("data-valid", "false");

  await page.keyboard.press("ControlOrMeta+z");
  await expect(editor.node("happy")).toBeVisible();
  await expect(edge(page, "src->happy")).toHaveCount(1);
  await expect(edge(page, "happy->mail")).toHaveCount(1);
  // …and the messages follow the undo.
  await expect(page.getByTestId("validation-status")).toHaveAttribute("data-valid", "true");
  await expect(page.getByTestId("node-errors-mail")).toHaveCount(0);
  await shot("editor-undo-delete");
});

test("a cycle: every edge of the loop is red and drawn above the nodes, and the note names the nodes in order", async ({ page, signedIn, editor, shot }) => {
  const tag = signedIn.email.split("@")[0];
  const { uploadId } = await uploadCsv(page, "people.csv", people(tag));
  const workflow = await apiPost<{ id: string }>(page, "/api/workflows", { name: "Loop", graph: thanksGraph(uploadId, { extraFilter: true }) });
  await page.goto(`/workflows/${workflow.id}`);
  await expect(page.getByTestId("validation-status")).toHaveAttribute("data-valid", "true");
  await editor.connect("vip", "happy");

  await expect(page.getByTestId("graph-issues")).toContainText('Nodes "happy" → "vip" → "happy" form a cycle');
  for (const id of ["happy->vip", "vip->happy"]) {
    await expect(edge(page, id).locator(".react-flow__edge-path")).toHaveCSS("stroke", "rgb(220, 38, 38)");
  }
  await expect(edge(page, "src->happy").locator(".react-flow__edge-path")).not.toHaveCSS("stroke", "rgb(220, 38, 38)");
  await shot("editor-cycle");

  // Undo removes the closing edge: the note and the red go with it at once.
  await page.getByTestId("undo").click();
  await expect(edge(page, "vip->happy")).toHaveCount(0);
  await expect(page.getByTestId("graph-issues")).toHaveCount(0);
  await expect(edge(page, "happy->vip").locator(".react-flow__edge-path")).not.toHaveCSS("stroke", "rgb(220, 38, 38)");
});

test("a misspelled FILTER field fails validation with the closest column", async ({ page, signedIn, editor, shot }) => {
  const tag = signedIn.email.split("@")[0];
  const { uploadId } = await uploadCsv(page, "people.csv", people(tag));
  const workflow = await apiPost<{ id: string }>(page, "/api/workflows", { name: "Typo", graph: thanksGraph(uploadId) });
  await page.goto(`/workflows/${workflow.id}`);
  await editor.select("happy");
  await editor.field("filter-expr").fill("ratting >= 4");
  await expect(page.getByTestId("config-panel")).toContainText('The filter names "ratting" (at position 0), which is not a column of people.csv. Did you mean "rating"?');
  await expect(page.getByTestId("validation-status")).toHaveAttribute("data-valid", "false");
  await shot("editor-filter-typo");
  await editor.field("filter-expr").fill("rating >= 4");
  await expect(page.getByTestId("config-panel")).not.toContainText("ratting");
  await expect(page.getByTestId("validation-status")).toHaveAttribute("data-valid", "true");
});

test("a half-built workflow is kept as a draft; running it is refused with the reasons", async ({ page, signedIn: _s, editor, shot }) => {
  await editor.gotoNew();
  await editor.dragFromPalette("TRIGGER", 400, 80);
  await editor.dragFromPalette("DATA_SOURCE", 400, 260);
  await editor.connect("trigger", "source_1");
  await editor.setName("Half built");
  await page.getByTestId("save").click();
  await expect(page.getByTestId("draft-notice")).toContainText("Kept as a draft in this browser");
  await expect(page.getByTestId("draft-notice")).toContainText("at least one OUTPUT");
  await shot("editor-draft-kept");

  await page.getByTestId("run").click();
  await expect(page.getByTestId("draft-notice")).toContainText("Not run: the workflow has");

  // A reload brings the work back.
  page.once("dialog", (dialog) => void dialog.accept());
  await page.reload();
  await expect(page.getByTestId("draft-restored")).toBeVisible();
  await expect(editor.node("source_1")).toBeVisible();
  await expect(page.locator('.react-flow__edge[data-id="trigger->source_1"]')).toHaveCount(1);
  await expect(page.getByTestId("workflow-name")).toHaveValue("Half built");
  await shot("editor-draft-restored");
  await page.getByTestId("draft-discard").click();
  await expect(editor.node("source_1")).toHaveCount(0);
});

test("DATA_SOURCE: Google Drive and back keeps the chosen CSV", async ({ page, signedIn, editor }) => {
  const tag = signedIn.email.split("@")[0];
  const { uploadId } = await uploadCsv(page, "people.csv", people(tag));
  const workflow = await apiPost<{ id: string }>(page, "/api/workflows", { name: "Switch", graph: thanksGraph(uploadId) });
  await page.goto(`/workflows/${workflow.id}`);
  await editor.select("src");
  await expect(editor.field("upload-select")).toHaveValue(uploadId);
  await editor.field("source-mode-drive").click();
  await expect(editor.field("upload-select")).toHaveCount(0);
  await editor.field("source-mode-upload").click();
  await expect(editor.field("upload-select")).toHaveValue(uploadId);
  // Also after the node was deselected in between.
  await editor.field("source-mode-drive").click();
  await editor.select("happy");
  await editor.select("src");
  await editor.field("source-mode-upload").click();
  await expect(editor.field("upload-select")).toHaveValue(uploadId);
});
