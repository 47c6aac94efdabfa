import { expect, test } from "./fixtures";
import { apiPost, people, thanksGraph, uploadCsv, waitForRun } from "./support/api";

// Point 8 of issue 17: the small things a person notices.
test("Tidy up refits the view, and a long run error is capped with Show more", async ({ page, signedIn, editor }) => {
  const tag = signedIn.email.split("@")[0];
  await page.goto("/workflows");
  const { uploadId } = await uploadCsv(page, "people.csv", people(tag));
  const unknown = "a_column_name_that_is_not_in_this_file_at_all_and_is_long_enough_to_make_a_long_error_message";
  // A column's value read as if it had fields: valid at save time (rating is a column), an error per row at run time.
  const graph = thanksGraph(uploadId, { expr: `rating.${unknown} >= 4` });
  graph.nodes[3].position = { x: 4000, y: 3000 }; // far away: the first view is zoomed far out
  const workflow = await apiPost<{ id: string }>(page, "/api/workflows", { name: "Polish", graph });
  const run = await apiPost<{ runId: string }>(page, `/api/workflows/${workflow.id}/run`, undefined, 202);
  await waitForRun(page, run.runId, "FAILED");
  await page.goto(`/workflows/${workflow.id}?run=${run.runId}`);

  const error = page.getByTestId("node-run-error-happy");
  await expect(error).toBeVisible();
  await page.getByTestId("auto-layout").click();
  // After Tidy up every node is on screen again, at a readable zoom.
  const canvas = (await page.getByTestId("canvas").boundingBox())!;
  for (const id of ["start", "src", "happy", "mail"]) {
    await expect(async () => {
      const box = (await editor.node(id).boundingBox())!;
      expect(box.x).toBeGreaterThanOrEqual(canvas.x - 1);
      expect(box.y).toBeGreaterThanOrEqual(canvas.y - 1);
      expect(box.x + box.width).toBeLessThanOrEqual(canvas.x + canvas.width + 1);
      expect(box.y + box.height).toBeLessThanOrEqual(canvas.y + canvas.height + 1);
    }).toPass();
  }
  const capped = (await editor.node("happy").boundingBox())!.height;
  await page.getByTestId("node-run-error-toggle-happy").click();
  await expect(page.getByTestId("node-run-error-toggle-happy")).toHaveText("Show less");
  expect((await editor.node("happy").boundingBox())!.height).toBeGreaterThan(capped);
});

test("a new workflow is not 'Unsaved' until it changes; messages use words, not field names", async ({ page, signedIn: _s, editor }) => {
  let asked = 0;
  page.on("dialog", (dialog) => {
    asked++;
    void dialog.accept();
  });
  await editor.gotoNew();
  await expect(page.getByTestId("unsaved")).toHaveCount(0);
  await page.getByTestId("nav-workflows").click();
  await expect(page).toHaveURL(/\/workflows$/);
  expect(asked).toBe(0);

  await editor.gotoNew();
  await editor.dragFromPalette("OUTPUT", 400, 200);
  await expect(page.getByTestId("unsaved")).toBeVisible();
  await editor.select("output_1");
  await editor.field("output-foreach").fill("");
  await expect(page.getByTestId("config-panel")).toContainText("“For each” must not be empty");
  await expect(page.getByTestId("config-panel")).not.toContainText("forEach must");
});

test("numbers are grouped, nodes show keyboard focus, and two nodes connect with the keyboard", async ({ page, signedIn, editor }) => {
  const tag = signedIn.email.split("@")[0];
  await page.goto("/workflows");
  const { uploadId } = await uploadCsv(page, "people.csv", people(tag, 1200));
  const graph = thanksGraph(uploadId, { expr: "rating >= 99" });
  const workflow = await apiPost<{ id: string }>(page, "/api/workflows", { name: "Numbers", graph });
  const run = await apiPost<{ runId: string }>(page, `/api/workflows/${workflow.id}/run`, undefined, 202);
  await waitForRun(page, run.runId);
  await page.goto(`/workflows/${workflow.id}?run=${run.runId}`);
  await expect(page.getByTestId("edge-count-src->happy")).toHaveText("1,203 items");
  await editor.select("src");
  await expect(editor.field("upload-select").locator("option:checked")).toHaveText("people.csv (1,203 rows)");

  // Tab from the canvas reaches the nodes, and the focused one is clearly outlined.
  await page.getByTestId("canvas").click({ position: { x: 20, y: 20 } });
  let focusedNode = false;
  for (let i = 0; i < 40 && !focusedNode; i++) {
    await page.keyboard.press("Tab");
    focusedNode = await page.evaluate(() => !!document.activeElement?.classList.contains("react-flow__node"));
  }
  expect(focusedNode).toBe(true);
  const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle + " " + getComputedStyle(document.activeElement!).outlineWidth);
  expect(outline).toBe("solid 3px");

  // Connect with the keyboard: pick the node, then "Connect to" in the inspector.
  await page.getByTestId("edge-count-happy->mail").click();
  await page.getByTestId("delete-edge").click();
  await expect(page.locator('.react-flow__edge[data-id="happy->mail"]')).toHaveCount(0);
  await editor.select("happy");
  const connect = page.getByTestId("connect-to");
  await connect.focus();
  await connect.selectOption("mail");
  await expect(page.locator('.react-flow__edge[data-id="happy->mail"]')).toHaveCount(1);
});

test("dark mode follows the system and the toggle; favicon; the verify page points to the local mailbox", async ({ page, signedIn: _s }) => {
  await page.emulateMedia({ colorScheme: "dark" });
  await page.goto("/workflows");
  await expect(page.locator("html")).toHaveClass(/dark/);
  const toggle = page.getByTestId("theme-toggle");
  await expect(toggle).toHaveAttribute("data-theme", "system");
  await toggle.click(); // → light
  await expect(page.locator("html")).not.toHaveClass(/dark/);
  await page.reload();
  await expect(page.locator("html")).not.toHaveClass(/dark/);
  await page.getByTestId("theme-toggle").click(); // → dark
  await expect(page.locator("html")).toHaveClass(/dark/);
  await page.emulateMedia({ colorScheme: "light" });
  await expect(page.locator("html")).toHaveClass(/dark/);
  await page.getByTestId("theme-toggle").click(); // → system (light now)
  await expect(page.locator("html")).not.toHaveClass(/dark/);

  const icon = await page.locator('link[rel="icon"]').first().getAttribute("href");
  expect(icon).toContain("/favicon.svg");
  const favicon = await page.request.get("/favicon.svg");
  expect(favicon.status()).toBe(200);
  expect(favicon.headers()["content-type"]).toContain("image/svg+xml");

  await page.goto("/verify?email=someone%40example.com");
  await expect(page.getByTestId("verify-mailbox-hint")).toContainText("local mailbox");
  await expect(page.getByTestId("verify-mailbox-link")).toHaveAttribute("href", "/mailbox");
});

test("small screens: the nav folds into a menu, 768 px edits, below that the canvas is read-only", async ({ page, signedIn, editor }) => {
  const tag = signedIn.email.split("@")[0];
  await page.goto("/workflows");
  const { uploadId } = await uploadCsv(page, "people.csv", people(tag));
  const workflow = await apiPost<{ id: string }>(page, "/api/workflows", { name: "Small screens", graph: thanksGraph(uploadId) });

  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto("/workflows");
  await expect(page.getByTestId("nav-uploads")).toBeHidden();
  await page.getByTestId("nav-toggle").click();
  await expect(page.getByTestId("nav-uploads")).toBeVisible();
  // The header (logo, menu, theme, sign out) fits the phone's width.
  expect(await page.locator("header").first().evaluate((el) => el.scrollWidth)).toBeLessThanOrEqual(390);

  await page.goto(`/workflows/${workflow.id}`);
  await expect(editor.node("mail")).toBeVisible();
  await expect(page.getByTestId("narrow-note")).toBeVisible();
  await expect(page.getByTestId("palette")).toHaveCount(0);
  const before = await editor.position("mail");
  const box = (await editor.node("mail").boundingBox())!;
  await page.mouse.move(box.x + 30, box.y + 20);
  await page.mouse.down();
  await page.mouse.move(box.x + 90, box.y + 60, { steps: 5 });
  await page.mouse.up();
  expect(await editor.position("mail")).toBe(before);

  await page.setViewportSize({ width: 768, height: 1024 });
  await page.goto(`/workflows/${workflow.id}`);
  await expect(page.getByTestId("palette")).toBeVisible();
  await expect(page.getByTestId("narrow-note")).toHaveCount(0);
  const canvas = (await page.getByTestId("canvas").boundingBox())!;
  expect(canvas.width).toBeGreaterThanOrEqual(280);
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(768);
  await editor.select("happy");
  await expect(editor.field("filter-expr")).toBeEditable();
});
