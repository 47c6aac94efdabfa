import { startFakeOpenAI, prompt, type FakeOpenAI } from "../test/support/fake-openai";
import { expect, test } from "./fixtures";
import { apiPost, origin, waitForRun, uploadCsv } from "./support/api";

// AI for every item, as a person meets it: an AI node asked once per row, its estimate and sample answers in the
// Preview dialog before anything is paid, its progress and its items in the run view. The model is a local
// OpenAI-compatible fake (test/support/fake-openai.ts) the app reaches because the test server allows private targets.

const NAMES = ["Ada", "Grace", "Alan", "Barbara", "Edsger", "Frances", "Hedy", "Ivan", "Joan", "Ken", "Lynn", "Margaret"];

let ai: FakeOpenAI;

// A person's whole path through the editor, the estimate, a preview and a send: longer than one screen's test.
test.describe.configure({ timeout: 240_000 });

test.beforeAll(async () => {
  ai = await startFakeOpenAI();
  ai.answer((req) => {
    const [, name = "friend", rating = "?"] = /line for (\w+) who rated us (\d)/.exec(prompt(req)) ?? [];
    return { greeting: `Dear ${name}, thank you for the ${rating} stars!` };
  });
});

test.afterAll(async () => {
  await ai?.close();
});

async function useFakeModel(page: import("@playwright/test").Page) {
  const res = await page.request.put("/api/account/ai-provider", {
    headers: { origin: origin(page) },
    data: {
      provider: "openai-compatible",
      apiKey: "sk-fake-0000aiui",
      baseUrl: ai.url,
      model: "tiny-writer",
      maxConcurrency: 2,
      inputPricePerMillion: 0.4,
      outputPricePerMillion: 1.6,
    },
  });
  expect(res.status(), await res.text()).toBe(200);
}

test("For each item: the estimate and sample answers before paying, AI progress, the items table", async ({ page, signedIn, uploads, editor, shot }) => {
  const tag = signedIn.email.split("@")[0];
  const csv = ["name,email,rating", ...NAMES.map((n, i) => `${n},${n.toLowerCase()}-${tag}@example.com,${(i % 5) + 1}`)].join("\n") + "\n";
  await useFakeModel(page);

  await uploads.goto();
  await uploads.upload("fans.csv", csv);
  await expect(uploads.rowCount()).toHaveText("12 rows");

  await editor.gotoNew();
  await editor.dragFromPalette("TRIGGER", 450, 60);
  await editor.dragFromPalette("DATA_SOURCE", 450, 220);
  await editor.dragFromPalette("AI", 450, 380);
  await editor.dragFromPalette("OUTPUT", 450, 540);
  await editor.connect("trigger", "source_1");
  await editor.connect("source_1", "ai_1");
  await editor.connect("ai_1", "output_1");

  await editor.select("source_1");
  await editor.field("upload-select").selectOption({ label: "fans.csv (12 rows)" });

  // The AI node: "For each item" of the upload's rows, a prompt with {{item.…}} from the suggestions, one declared output.
  await editor.select("ai_1");
  await expect(page.getByTestId("ai-calls-once")).toHaveAttribute("aria-checked", "true");
  await page.getByTestId("ai-calls-each").click();
  await expect(page.getByTestId("ai-foreach-list")).toHaveValue("{{source_1.rows}}");
  await expect(page.getByTestId("ai-item-fields")).toContainText("{{item.rating}}");
  await editor.field("ai-prompt").fill("");
  await editor.field("ai-prompt").pressSequentially("Write one warm line for {{item.na");
  await expect(page.getByTestId("template-suggestions")).toContainText("item.name");
  await page.keyboard.press("Enter");
  await editor.field("ai-prompt").pressSequentially(" who rated us {{item.rating}}.");
  await expect(editor.field("ai-prompt")).toHaveValue("Write one warm line for {{item.name}} who rated us {{item.rating}}.");
  // The system prompt offers the item's fields too.
  await page.getByText("Model settings").click();
  await editor.field("ai-system").pressSequentially("Write for {{item.ra");
  await expect(page.getByTestId("template-suggestions")).toContainText("item.rating");
  await page.keyboard.press("Escape");
  await editor.field("ai-system").fill("");
  await editor.field("ai-output-name-0").fill("greeting");
  await editor.field("ai-onitemerror").selectOption("skip");
  await shot("ai-panel");

  // OUTPUT over the AI node's items: the declared output is an item field there.
  await editor.select("output_1");
  await editor.field("output-foreach").fill("{{ai_1.items}}");
  await editor.field("output-to").fill("{{item.email}}");
  await editor.field("output-subject").fill("A note for {{item.name}}");
  await editor.field("output-body").fill("");
  await editor.field("output-body").pressSequentially("{{item.gre");
  await expect(page.getByTestId("template-suggestions")).toContainText("item.greeting");
  await page.keyboard.press("Enter");

  await editor.setName(`Greet every fan ${tag}`);
  await expect(page.getByTestId("validation-status")).toHaveAttribute("data-valid", "true");
  await editor.save();

  // Preview: first the estimate (every prompt counted, three items asked), nothing else paid and nothing sent.
  const callsBefore = ai.requests.length;
  await page.getByTestId("preview").click();
  const dialog = page.getByTestId("preview-dialog");
  await expect(dialog.getByTestId("ai-estimate")).toBeVisible({ timeout: 60_000 });
  await expect(dialog.getByTestId("estimate-items")).toHaveText("12");
  await expect(dialog.getByTestId("estimate-approximate")).toBeVisible();
  await expect(dialog.getByTestId("estimate-cost")).toContainText("$");
  await expect(dialog.getByTestId("estimate-sample-row")).toHaveCount(3);
  await expect(dialog.getByTestId("estimate-sample")).toContainText("Dear Ada, thank you for the 1 stars!");
  expect(ai.requests.length - callsBefore).toBe(3);
  await shot("ai-estimate");
  // On a phone the figures go two by two and the sample table scrolls inside the dialog.
  await page.setViewportSize({ width: 390, height: 844 });
  await expect(dialog.getByTestId("preview-continue")).toBeInViewport();
  await page.screenshot({ path: "e2e/screenshots/ai-estimate-phone.png" });
  await page.setViewportSize({ width: 1440, height: 900 });

  // Agreeing asks for every item (slowly, so the progress shows), then renders the emails with their AI field.
  ai.delayMs(400);
  await dialog.getByTestId("preview-continue").click();
  await expect(dialog.getByTestId("ai-progress-ai_1")).toBeVisible({ timeout: 30_000 });
  await shot("ai-preview-progress");
  await expect(dialog.getByTestId("preview-planned")).toHaveText("12", { timeout: 60_000 });
  await expect(dialog.getByTestId("preview-body")).toContainText("Dear Ada, thank you for the 1 stars!");
  await expect(dialog.getByTestId("preview-ai")).toContainText("12 calls");
  // The estimate asked its sample, spread over the list (the first, the middle and the last: Ada, Hedy, Margaret), the
  // preview every item once.
  expect(ai.callsFor("line for Ada ")).toBe(2);
  expect(ai.callsFor("line for Hedy ")).toBe(2);
  expect(ai.callsFor("line for Margaret ")).toBe(2);
  expect(ai.callsFor("line for Barbara ")).toBe(1);
  const callsAfterPreview = ai.requests.length;
  await shot("ai-preview-emails");

  await dialog.getByTestId("preview-send").click();
  await expect(page).toHaveURL(/\/runs\/run_/, { timeout: 60_000 });
  await expect(page.getByTestId("run-status")).toHaveAttribute("data-status", "SUCCESS", { timeout: 60_000 });
  // The send used the preview's answers: no call, nothing paid again; the items are the preview's.
  await expect(page.getByTestId("run-ai-totals-calls")).toHaveText("0");
  await expect(page.getByTestId("run-ai-totals")).toContainText("the preview's answers");
  await page.getByTestId("run-node-ai_1").click();
  const items = page.getByTestId("ai-items");
  await expect(items.getByTestId("ai-item-row")).toHaveCount(12);
  // Each item beside its answer: the row of the upload it was asked for.
  await expect(items.getByTestId("ai-item-row").nth(1)).toContainText(`grace-${tag}@example.com`);
  await expect(items.getByTestId("ai-item-greeting").nth(1)).toHaveText("Dear Grace, thank you for the 2 stars!");
  await expect(page.getByTestId("ai-node-progress-ai_1")).toHaveAttribute("data-done", "12");
  await shot("ai-run");
  // Sending what was previewed asks the model nothing: the preview's answers are the run's.
  expect(ai.requests.length).toBe(callsAfterPreview);
});

test("a live run shows its AI progress as the answers arrive, and a refused item's sentence in the items table", async ({ page, signedIn, shot }) => {
  const tag = signedIn.email.split("@")[0];
  await useFakeModel(page);
  const csv = ["name,email,rating", ...NAMES.map((n, i) => `${n},${n.toLowerCase()}-${tag}@example.com,${(i % 5) + 1}`)].join("\n") + "\n";
  const { uploadId } = await uploadCsv(page, "fans.csv", csv);
  const { id: workflowId } = await apiPost<{ id: string }>(page, "/api/workflows", {
    name: `Live AI ${tag}`,
    graph: {
      nodes: [
        { id: "start", type: "TRIGGER", data: {}, position: { x: 0, y: 0 } },
        { id: "src", type: "DATA_SOURCE", data: { uploadId }, position: { x: 0, y: 160 } },
        {
          id: "greet",
          type: "AI",
          data: { forEach: "{{src.rows}}", prompt: "Write one warm line for {{item.name}} who rated us {{item.rating}}.", output: [{ name: "greeting", type: "string" }], onItemError: "skip" },
          position: { x: 0, y: 320 },
        },
        { id: "mail", type: "OUTPUT", data: { forEach: "{{greet.items}}", to: "{{item.email}}", subject: "Hi {{item.name}}", body: "{{item.greeting}}" }, position: { x: 0, y: 480 } },
      ],
      edges: [
        { source: "start", target: "src" },
        { source: "src", target: "greet" },
        { source: "greet", target: "mail" },
      ],
    },
  });

  ai.delayMs(3000);
  ai.refuse((req) => prompt(req).includes("line for Grace "));
  try {
    const started = await page.request.post(`/api/workflows/${workflowId}/run`, { headers: { origin: origin(page) } });
    expect(started.status()).toBe(202);
    const { runId } = (await started.json()) as { runId: string };
    await page.goto(`/runs/${runId}`);
    await page.getByTestId("run-node-greet").click();
    const progress = page.getByTestId("ai-node-progress-greet");
    await expect(progress).toBeVisible();
    // Seen part way: some answered, not all.
    await expect.poll(async () => Number(await progress.getAttribute("data-done")), { timeout: 30_000 }).toBeGreaterThan(0);
    expect(Number(await progress.getAttribute("data-done"))).toBeLessThan(12);
    await shot("ai-run-live");

    await waitForRun(page, runId);
    await expect(page.getByTestId("run-status")).toHaveAttribute("data-status", "SUCCESS");
    await expect(progress).toHaveAttribute("data-done", "11");
    await expect(progress).toHaveAttribute("data-failed", "1");
    await page.getByTestId("ai-items-failed").click();
    await expect(page.getByTestId("ai-item-row")).toHaveCount(1);
    await expect(page.getByTestId("ai-item-row")).toContainText("Grace");
    await expect(page.getByTestId("ai-item-error")).not.toBeEmpty();
    await shot("ai-run-skipped");

    // The editor shows the same beside the canvas when the AI node is selected.
    await page.goto(`/workflows/${workflowId}?run=${runId}`);
    await page.getByTestId("node-greet").click();
    const card = page.getByTestId("node-run-card");
    await expect(card.getByTestId("ai-node-progress-greet")).toHaveAttribute("data-done", "11");
    await expect(card.getByTestId("ai-item-card")).toHaveCount(12);
    await expect(card.getByTestId("ai-item-card").nth(1)).toContainText(`grace-${tag}@example.com`);
    await shot("ai-editor-run");
    await page.goto(`/runs/${runId}`);
    await page.getByTestId("run-node-greet").click();

    // Dark mode (the system's choice): the figures and the table keep their contrast.
    await page.emulateMedia({ colorScheme: "dark" });
    await shot("ai-run-dark");
    await page.emulateMedia({ colorScheme: "light" });

    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByTestId("ai-items-all").click();
    // A phone reads the items as cards, the answer under each.
    await expect(page.getByTestId("ai-item-card")).toHaveCount(12);
    await expect(page.getByTestId("ai-item-card").nth(1)).toContainText("content_policy_violation");
    await expect(page.getByTestId("ai-item-card").nth(1)).toContainText(`grace-${tag}@example.com`);
    await expect(page.getByTestId("ai-item-card").nth(2)).toContainText("Dear Alan, thank you for the 3 stars!");
    await page.getByTestId("ai-items").scrollIntoViewIfNeeded();
    await page.screenshot({ path: "e2e/screenshots/ai-run-phone-items.png" });
    await shot("ai-run-phone");
    // Nothing of the page is wider than the phone: wide tables scroll inside their own box.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  } finally {
    ai.refuse(null);
    ai.delayMs(0);
  }
});

test("the Preview dialog says why an estimate cannot be made, and offers nothing to pay", async ({ page, signedIn, shot }) => {
  const tag = signedIn.email.split("@")[0];
  const { uploadId } = await uploadCsv(page, "fans.csv", `name,email,rating\nAda,ada-${tag}@example.com,5\n`);
  const { id: workflowId } = await apiPost<{ id: string }>(page, "/api/workflows", {
    name: `No AI key ${tag}`,
    graph: {
      nodes: [
        { id: "start", type: "TRIGGER", data: {}, position: { x: 0, y: 0 } },
        { id: "src", type: "DATA_SOURCE", data: { uploadId }, position: { x: 0, y: 160 } },
        { id: "greet", type: "AI", data: { forEach: "{{src.rows}}", prompt: "Greet {{item.name}}", output: [{ name: "greeting", type: "string" }] }, position: { x: 0, y: 320 } },
        { id: "mail", type: "OUTPUT", data: { forEach: "{{greet.items}}", to: "{{item.email}}", subject: "Hi", body: "{{item.greeting}}" }, position: { x: 0, y: 480 } },
      ],
      edges: [
        { source: "start", target: "src" },
        { source: "src", target: "greet" },
        { source: "greet", target: "mail" },
      ],
    },
  });
  await page.goto(`/workflows/${workflowId}`);
  await page.getByTestId("preview").click();
  const dialog = page.getByTestId("preview-dialog");
  // This account has no AI provider: the estimate fails with the node's sentence, and nothing can be paid for.
  await expect(dialog.getByTestId("estimate-error")).toContainText("AI provider key not configured", { timeout: 60_000 });
  await expect(dialog.getByTestId("preview-continue")).toBeDisabled();
  await shot("ai-estimate-error");
});
