import { gzipSync } from "node:zlib";
import { expect, test } from "./fixtures";
import { apiPost, people, thanksGraph, uploadCsv, waitForRun } from "./support/api";

// Regenerates the committed editor screenshots (light and dark, 1440 and 768 px wide) and prints the editor route's
// compressed JavaScript, which issue 17 caps at 300 KB.
const SIZES = [1440, 768] as const;
const THEMES = ["light", "dark"] as const;
const JS_BUDGET_KB = 300;

test("editor screenshots in light and dark at 1440 and 768 px, and the editor's JavaScript size", async ({ page, signedIn, editor }) => {
  test.setTimeout(300_000);
  const tag = signedIn.email.split("@")[0];
  await page.goto("/workflows");
  const { uploadId } = await uploadCsv(page, "people.csv", people(tag));
  const workflow = await apiPost<{ id: string }>(page, "/api/workflows", { name: "Thank happy customers", graph: thanksGraph(uploadId) });
  const run = await apiPost<{ runId: string }>(page, `/api/workflows/${workflow.id}/run`, undefined, 202);
  await waitForRun(page, run.runId);

  for (const theme of THEMES) {
    await page.emulateMedia({ colorScheme: theme });
    for (const width of SIZES) {
      await page.setViewportSize({ width, height: width === 1440 ? 900 : 1024 });
      await page.goto(`/workflows/${workflow.id}?run=${run.runId}`);
      await expect(editor.status("mail")).toHaveAttribute("data-status", "SUCCESS");
      await expect(page.locator("html")).toHaveClass(theme === "dark" ? /dark/ : /^(?!.*dark).*$/);
      await editor.node("happy").click();
      await expect(page.getByTestId("node-run-card")).toBeVisible();
      await expect(page.getByTestId("validation-status")).toHaveAttribute("data-valid", "true");
      await page.screenshot({ path: `e2e/screenshots/ui-editor-${theme}-${width}.png` });
    }
  }

  // The editor route's JavaScript: every script its HTML loads, compressed as a server would send it (what a
  // browser downloads to open the editor; chunks prefetched for other pages' links are not the editor's).
  await page.setViewportSize({ width: 1440, height: 900 });
  const html = await (await page.request.get(`/workflows/${workflow.id}`)).text();
  const scripts = [...new Set([...html.matchAll(/<script[^>]+src="([^"]+\.js)"/g)].map((m) => m[1]))];
  let total = 0;
  for (const url of scripts) total += gzipSync(await (await page.request.get(url)).body(), { level: 9 }).length;
  const kb = Math.round(total / 1024);
  console.log(`Editor route JavaScript: ${kb} KB gzip in ${scripts.length} files (budget ${JS_BUDGET_KB} KB)`);
  test.info().annotations.push({ type: "editor-js-gzip-kb", description: String(kb) });
  expect(scripts.length).toBeGreaterThan(3);
  expect(kb).toBeLessThanOrEqual(JS_BUDGET_KB);
});
