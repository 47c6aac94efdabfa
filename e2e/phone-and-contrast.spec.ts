import { expect, test } from "./fixtures";
import { apiPost, people, thanksGraph, uploadCsv, waitForRun } from "./support/api";
import { contrastMisses, sidewaysOverflow } from "./support/contrast";

const PHONE = { width: 390, height: 844 };

test("phone (390×844): the mailbox and the API reference fit the width, with readable text", async ({ page, signedIn, shot }) => {
  test.setTimeout(240_000);
  const tag = signedIn.email.split("@")[0];
  const { uploadId } = await uploadCsv(page, "people.csv", people(tag));
  const workflow = await apiPost<{ id: string }>(page, "/api/workflows", {
    name: "Phone",
    graph: thanksGraph(uploadId, { subject: "Thanks for the rating, {{item.name}} — a long subject line to see it wrap on a phone" }),
  });
  const run = await apiPost<{ runId: string }>(page, `/api/workflows/${workflow.id}/run`, undefined, 202);
  await waitForRun(page, run.runId);
  await page.setViewportSize(PHONE);

  await page.goto("/mailbox");
  await page.getByTestId("mailbox-item").first().click();
  await expect(page.getByTestId("mailbox-message")).toBeVisible();
  await shot("phone-mailbox");
  expect(await sidewaysOverflow(page)).toEqual([]);
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
  expect(await smallestText(page)).toBeGreaterThanOrEqual(12);

  await page.goto("/api-docs");
  await expect(page.locator("h1").first()).toBeVisible();
  await page.waitForLoadState("networkidle");
  await shot("phone-api-docs");
  expect(await sidewaysOverflow(page)).toEqual([]);
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
  expect(await smallestText(page)).toBeGreaterThanOrEqual(12);
});

test("dark mode: the text of the main pages meets WCAG AA contrast (4.5:1, large text 3:1)", async ({ page, signedIn, shot }) => {
  test.setTimeout(240_000);
  const tag = signedIn.email.split("@")[0];
  const { uploadId } = await uploadCsv(page, "people.csv", people(tag));
  const workflow = await apiPost<{ id: string }>(page, "/api/workflows", { name: "Contrast", graph: thanksGraph(uploadId) });
  const run = await apiPost<{ runId: string }>(page, `/api/workflows/${workflow.id}/run`, undefined, 202);
  await waitForRun(page, run.runId);
  await apiPost(page, "/api/suppressions", { emails: [`dark-${tag}@example.com`] }, 200);
  await page.emulateMedia({ colorScheme: "dark" });

  const pages = ["/workflows", `/workflows/${workflow.id}`, `/runs/${run.runId}`, "/runs", "/uploads", "/suppressions", "/settings", "/mailbox", "/api-docs"];
  const found: Record<string, unknown[]> = {};
  for (const path of pages) {
    await page.goto(path);
    await expect(page.locator("html")).toHaveClass(/dark/);
    await page.waitForLoadState("networkidle");
    if (path === "/suppressions") await page.getByTestId("suppressions-paste").fill("ok@example.com\nnot-an-address");
    const misses = await contrastMisses(page);
    if (misses.length) found[path] = misses;
    await shot(`dark${path.replace(/\/(wf|run)_[^/]+/, "/$1").replace(/\//g, "-")}`);
  }
  expect(found).toEqual({});
});

test("the Suppressions paste box names a bad line; a .txt upload is refused by name", async ({ page, signedIn: _s, shot }) => {
  await page.goto("/suppressions");
  await page.getByTestId("suppressions-paste").fill("ann@example.com\nbob@example.com\nbob@@example.com\ncarol@example.com");
  await expect(page.getByTestId("suppressions-problem")).toHaveText(['Line 3: "bob@@example.com" is not an email address.']);
  await expect(page.getByTestId("suppressions-add")).toBeDisabled();
  await shot("suppressions-bad-line");
  await page.getByTestId("suppressions-paste").fill("ann@example.com\nbob@example.com");
  await expect(page.getByTestId("suppressions-problems")).toHaveCount(0);
  await page.getByTestId("suppressions-add").click();
  await expect(page.getByTestId("suppressions-notice")).toContainText("2 added");

  await page.goto("/uploads");
  await page.getByTestId("upload-input").setInputFiles({ name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from("hello\nworld\n") });
  await expect(page.getByTestId("upload-error")).toContainText('"notes.txt" is not a CSV file (its name ends in ".txt"): upload a file whose name ends in ".csv"');
  await shot("upload-txt-refused");
});

/** The smallest font size (px) of visible text on the page. */
function smallestText(page: import("@playwright/test").Page): Promise<number> {
  return page.evaluate(() => {
    let smallest = Infinity;
    for (const el of Array.from(document.body.querySelectorAll("*"))) {
      if (!Array.from(el.childNodes).some((n) => n.nodeType === Node.TEXT_NODE && n.textContent!.trim() !== "")) continue;
      const rect = el.getBoundingClientRect();
      if (rect.width <= 1 || rect.height <= 1 || getComputedStyle(el).visibility !== "visible") continue;
      smallest = Math.min(smallest, parseFloat(getComputedStyle(el).fontSize));
    }
    return smallest;
  });
}
