import { expect, test } from "./fixtures";

const ROWS = 250_000; // ~10 MB: three tus pieces of at most 4 MiB
const MIB = 1024 * 1024;

/** name,email,rating with three happy people (rating 5) among everyone else (rating 1). */
function bigCsv(tag: string): Buffer {
  const lines = ["name,email,rating"];
  for (let i = 0; i < ROWS; i++) {
    const happy = i % 100_000 === 7;
    lines.push(`Person ${i},p${i}-${tag}@example.com,${happy ? 5 : 1}`);
  }
  return Buffer.from(lines.join("\n") + "\n");
}

test("a multi-MB CSV goes up in resumable pieces with a progress bar, survives a dropped piece, and feeds a workflow", async ({
  page,
  signedIn,
  uploads,
  editor,
  baseURL,
  shot,
}) => {
  // 10 MB up through the browser and 250,000 rows through a run: more than the default 2 minutes on a busy machine.
  test.setTimeout(300_000);
  const tag = signedIn.email.split("@")[0];
  const csv = bigCsv(tag);
  expect(csv.length).toBeGreaterThan(2 * 4.5e6); // more than Vercel's request limit, twice over

  // Hold the second piece until the progress bar has been seen part-way, then drop its connection once:
  // tus-js-client must ask the server for its offset (HEAD) and go on from there by itself.
  const pieceSizes: number[] = [];
  let patches = 0;
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  await page.route("**/api/uploads/tus/*", async (route) => {
    const request = route.request();
    if (request.method() !== "PATCH") return route.continue();
    pieceSizes.push(request.postDataBuffer()?.length ?? 0);
    if (++patches === 2) {
      await held;
      return route.abort("connectionreset");
    }
    return route.continue();
  });
  const heads: number[] = [];
  page.on("response", (res) => {
    if (res.request().method() === "HEAD" && res.url().includes("/api/uploads/tus/")) heads.push(Number(res.headers()["upload-offset"]));
  });
  const finished = page.waitForResponse((res) => res.request().method() === "PATCH" && !!res.headers()["flowmail-upload-id"], { timeout: 90_000 });

  await uploads.goto();
  await page.getByTestId("upload-input").setInputFiles({ name: "everyone.csv", mimeType: "text/csv", buffer: csv });
  const bar = page.getByTestId("upload-progress-bar");
  await expect(bar).toBeVisible();
  await expect.poll(async () => Number(await bar.getAttribute("aria-valuenow"))).toBeGreaterThanOrEqual(30);
  expect(Number(await bar.getAttribute("aria-valuenow"))).toBeLessThan(100);
  await shot("uploads-progress");
  release();

  const uploadId = (await finished).headers()["flowmail-upload-id"];
  expect(uploadId).toMatch(/^upl_/);
  await expect(page.getByTestId("preview-filename")).toHaveText("everyone.csv");
  await expect(uploads.rowCount()).toHaveText(`${ROWS.toLocaleString()} rows`);
  await expect(uploads.columns()).toHaveText(["name", "email", "rating"]);
  expect(heads).toEqual([4 * MIB]); // resumed from the server's offset after the dropped piece
  expect(Math.max(...pieceSizes)).toBeLessThanOrEqual(4 * MIB);
  await page.unroute("**/api/uploads/tus/*");

  // The upload in a workflow: DATA_SOURCE reads all 250,000 rows, FILTER keeps the three happy people.
  const origin = new URL(baseURL!).origin;
  const graph = {
    nodes: [
      { id: "trigger", type: "TRIGGER", data: {} },
      { id: "src", type: "DATA_SOURCE", data: { uploadId } },
      { id: "happy", type: "FILTER", data: { source: "{{src.rows}}", expr: "rating >= 5" } },
      { id: "out", type: "OUTPUT", data: { forEach: "{{happy.items}}", to: "{{item.email}}", subject: "Hi {{item.name}}", body: "Thanks!" } },
    ],
    edges: [
      { source: "trigger", target: "src" },
      { source: "src", target: "happy" },
      { source: "happy", target: "out" },
    ],
  };
  const created = await page.request.post("/api/workflows", { headers: { origin }, data: { name: `Happy people ${tag}`, graph } });
  expect(created.status()).toBe(201);
  const { id } = (await created.json()) as { id: string };
  await page.goto(`/workflows/${id}`);
  await editor.run();
  for (const node of ["trigger", "src", "happy", "out"]) {
    await expect(editor.status(node)).toHaveAttribute("data-status", "SUCCESS", { timeout: 90_000 });
  }
  await expect(page.getByTestId("summary-emails-sent")).toHaveText("3");
  await shot("uploads-workflow");
});

test("an invalid CSV is refused with its line number", async ({ page, signedIn: _signedIn, uploads }) => {
  await uploads.goto();
  const csv = "name,email\nAda,ada@example.com\nBob,bob@example.com,extra\n";
  await page.getByTestId("upload-input").setInputFiles({ name: "broken.csv", mimeType: "text/csv", buffer: Buffer.from(csv) });
  await expect(page.getByTestId("upload-error")).toContainText("Line 3");
  await expect(page.getByTestId("upload-progress")).toBeHidden();
});
