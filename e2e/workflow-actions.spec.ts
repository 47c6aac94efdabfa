import { readFile } from "node:fs/promises";
import { expect, test } from "./fixtures";
import { apiPost, people, thanksGraph, uploadCsv } from "./support/api";

// Point 5 of issue 17: the workflow list's actions, and copy/paste/duplicate/multi-select on the canvas.
test("rename, duplicate, delete with confirmation, export and import a workflow from the list", async ({ page, signedIn, editor }) => {
  test.setTimeout(300_000); // a long walk through the list on a small machine
  const tag = signedIn.email.split("@")[0];
  await page.goto("/workflows");
  const { uploadId } = await uploadCsv(page, "people.csv", people(tag));
  await apiPost(page, "/api/workflows", { name: "Weekly thanks", graph: thanksGraph(uploadId) });
  await page.reload();
  const row = (name: string) => page.getByTestId("workflow-row").filter({ has: page.getByText(name, { exact: true }) });

  await row("Weekly thanks").getByTestId("workflow-actions").click();
  await page.getByTestId("action-rename").click();
  await page.getByTestId("rename-input").fill("Weekly thank-yous");
  await page.getByTestId("rename-save").click();
  await expect(row("Weekly thank-yous")).toHaveCount(1);

  await row("Weekly thank-yous").getByTestId("workflow-actions").click();
  await page.getByTestId("action-duplicate").click();
  await expect(page).toHaveURL(/\/workflows\/wf_/);
  await expect(page.getByTestId("workflow-name")).toHaveValue("Copy of Weekly thank-yous");
  await expect(editor.node("mail")).toBeVisible();

  await page.getByTestId("nav-workflows").click();
  await row("Copy of Weekly thank-yous").getByTestId("workflow-actions").click();
  await page.getByTestId("action-delete").click();
  await expect(page.getByTestId("delete-dialog")).toContainText("Delete “Copy of Weekly thank-yous”?");
  await page.getByTestId("delete-cancel").click();
  await expect(row("Copy of Weekly thank-yous")).toHaveCount(1);
  await row("Copy of Weekly thank-yous").getByTestId("workflow-actions").click();
  await page.getByTestId("action-delete").click();
  await page.getByTestId("delete-confirm").click();
  await expect(row("Copy of Weekly thank-yous")).toHaveCount(0);
  await expect(row("Weekly thank-yous")).toHaveCount(1);

  await row("Weekly thank-yous").getByTestId("workflow-actions").click();
  const [download] = await Promise.all([page.waitForEvent("download"), page.getByTestId("action-export").click()]);
  expect(download.suggestedFilename()).toBe("Weekly-thank-yous.flowmail.json");
  const exported = JSON.parse(await readFile((await download.path())!, "utf8"));
  expect(exported).toMatchObject({ name: "Weekly thank-yous", schedule: null, graph: { nodes: expect.any(Array), edges: expect.any(Array) } });

  // Someone else's export names an upload this account does not have: it opens as a draft that says so.
  exported.name = "From a colleague";
  exported.graph.nodes[1].data.uploadId = "upl_notmine0000000000000";
  await page.getByTestId("import-file").setInputFiles({ name: "colleague.json", mimeType: "application/json", buffer: Buffer.from(JSON.stringify(exported)) });
  await expect(page).toHaveURL(/\/workflows\/new\?import=1$/);
  await expect(page.getByTestId("workflow-name")).toHaveValue("From a colleague");
  await expect(page.getByTestId("unsaved")).toBeVisible();
  await expect(page.getByTestId("node-errors-src")).toContainText("does not exist");
  await expect(page.getByTestId("validation-status")).toHaveAttribute("data-valid", "false");
  await editor.select("src");
  await editor.field("upload-select").selectOption({ label: "people.csv (3 rows)" });
  await expect(page.getByTestId("validation-status")).toHaveAttribute("data-valid", "true");
  await editor.save();

  await page.goto("/workflows");
  await page.getByTestId("import-file").setInputFiles({ name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from("hello") });
  await expect(page.getByTestId("import-error")).toContainText("not JSON");
});

test("copy, paste and duplicate nodes with the keyboard; select several, move and delete them together", async ({ page, signedIn, editor }) => {
  test.setTimeout(240_000);
  const tag = signedIn.email.split("@")[0];
  await page.goto("/workflows");
  const { uploadId } = await uploadCsv(page, "people.csv", people(tag));
  const workflow = await apiPost<{ id: string }>(page, "/api/workflows", { name: "Clipboard", graph: thanksGraph(uploadId) });
  await page.goto(`/workflows/${workflow.id}`);
  await expect(editor.node("mail")).toBeVisible();

  // Two connected nodes copied together: the pasted OUTPUT reads from the pasted FILTER, not the original.
  await editor.node("happy").click();
  await editor.node("mail").click({ modifiers: ["ControlOrMeta"] });
  await expect(page.getByTestId("multi-selection")).toContainText("2 nodes selected");
  await page.keyboard.press("ControlOrMeta+c");
  await page.keyboard.press("ControlOrMeta+v");
  await expect(editor.node("filter_1")).toBeVisible();
  await expect(editor.node("output_1")).toBeVisible();
  await expect(page.locator('.react-flow__edge[data-id="filter_1->output_1"]')).toHaveCount(1);
  // Pasted beside the originals, not on top of them.
  expect((await editor.node("filter_1").boundingBox())!.x).toBeGreaterThan((await editor.node("happy").boundingBox())!.x + 200);
  await page.getByTestId("canvas").click({ position: { x: 30, y: 30 } });
  // The pasted OUTPUT lands at the canvas's lower right, partly under the minimap: click its header.
  await editor.node("output_1").click({ position: { x: 12, y: 10 } });
  await expect(editor.field("output-foreach")).toHaveValue("{{filter_1.items}}");

  await page.keyboard.press("ControlOrMeta+d");
  await expect(editor.node("output_2")).toBeVisible();

  // Move two at once, then delete both.
  await page.getByTestId("canvas").click({ position: { x: 30, y: 30 } });
  await editor.node("filter_1").click();
  await editor.node("output_1").click({ modifiers: ["ControlOrMeta"], position: { x: 12, y: 10 } });
  const before = [await editor.position("filter_1"), await editor.position("output_1")];
  const box = (await editor.node("filter_1").boundingBox())!;
  await page.mouse.move(box.x + 40, box.y + 20);
  await page.mouse.down();
  await page.mouse.move(box.x + 140, box.y + 70, { steps: 8 });
  await page.mouse.up();
  const after = [await editor.position("filter_1"), await editor.position("output_1")];
  expect(after[0]).not.toBe(before[0]);
  expect(after[1]).not.toBe(before[1]);
  await page.keyboard.press("Delete");
  await expect(editor.node("filter_1")).toHaveCount(0);
  await expect(editor.node("output_1")).toHaveCount(0);
  await expect(editor.node("happy")).toBeVisible();
  await page.keyboard.press("ControlOrMeta+z");
  await expect(editor.node("filter_1")).toBeVisible();
});
