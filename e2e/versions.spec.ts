import { expect, test } from "./fixtures";
import { apiPatch, apiPost, people, thanksGraph, uploadCsv } from "./support/api";

// Points 6 and 7 of issue 17: the versions panel (list, view read-only, restore) and "Test this node".
test("the versions panel lists every version, shows one read-only and restores it as a new version", async ({ page, signedIn, editor }) => {
  const tag = signedIn.email.split("@")[0];
  await page.goto("/workflows");
  const { uploadId } = await uploadCsv(page, "people.csv", people(tag));
  const workflow = await apiPost<{ id: string }>(page, "/api/workflows", { name: "Versions", graph: thanksGraph(uploadId, { subject: "First {{item.name}}" }) });
  await apiPatch(page, `/api/workflows/${workflow.id}`, { graph: thanksGraph(uploadId, { subject: "Second {{item.name}}" }) });
  await apiPatch(page, `/api/workflows/${workflow.id}`, { graph: thanksGraph(uploadId, { subject: "Third {{item.name}}", extraFilter: true }) });

  await page.goto(`/workflows/${workflow.id}`);
  await page.getByTestId("tab-versions").click();
  await expect(page.getByTestId("versions-panel").locator("li")).toHaveCount(3);
  await expect(page.getByTestId("version-3")).toContainText("current");
  await expect(page.getByTestId("version-1")).toContainText("4 nodes");

  await page.getByTestId("version-view-1").click();
  await expect(page.getByTestId("version-banner")).toHaveAttribute("data-version", "1");
  await expect(editor.node("vip")).toHaveCount(0);
  await editor.node("mail").click();
  await expect(editor.field("output-subject")).toHaveValue("First {{item.name}}");
  await expect(editor.field("output-subject")).toBeDisabled();
  await expect(page.getByTestId("save")).toBeDisabled();

  await page.getByTestId("banner-restore").click();
  await expect(page.getByTestId("version-banner")).toHaveCount(0);
  await expect(page.getByTestId("saved")).toBeVisible();
  await expect(editor.node("vip")).toHaveCount(0);
  await page.getByTestId("tab-versions").click();
  await expect(page.getByTestId("version-4")).toContainText("current");
  const stored = await (await page.request.get(`/api/workflows/${workflow.id}`)).json();
  expect(stored.version).toBe(4);
  expect(stored.graph.nodes.find((n: { id: string }) => n.id === "mail").data.subject).toBe("First {{item.name}}");
});

test("Test this node runs a preview up to the selected node and shows its output in the inspector", async ({ page, signedIn, editor }) => {
  const tag = signedIn.email.split("@")[0];
  await page.goto("/workflows");
  const { uploadId } = await uploadCsv(page, "people.csv", people(tag));
  const workflow = await apiPost<{ id: string }>(page, "/api/workflows", { name: "Test a node", graph: thanksGraph(uploadId) });
  await page.goto(`/workflows/${workflow.id}`);

  await editor.select("happy");
  await page.getByTestId("test-node").click();
  await expect(editor.status("happy")).toHaveAttribute("data-status", "SUCCESS", { timeout: 60_000 });
  await expect(editor.status("mail")).toHaveAttribute("data-status", "SKIPPED");
  // The inspector stays on the node and shows what it produced.
  await expect(page.getByTestId("node-run-card")).toBeVisible();
  await expect(page.getByTestId("node-output-items")).toContainText(`grace-${tag}@example.com`);
  const runId = new URL(page.url()).searchParams.get("run");
  const run = await (await page.request.get(`/api/workflows/runs/${runId}`)).json();
  expect(run).toMatchObject({ mode: "preview", status: "SUCCESS" });
  const inbox = await (await page.request.get(`/api/dev/mailbox?to=${encodeURIComponent(`ada-${tag}@example.com`)}`)).json();
  expect(inbox.items).toHaveLength(0);
});
