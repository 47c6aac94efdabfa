import { expect, type Page } from "@playwright/test";

// Set-up through the API with the page's session cookie (and its Origin, as the browser would send it), so a spec
// spends its time on what it checks in the UI.

export const origin = (page: Page) => new URL(page.url() === "about:blank" ? "http://localhost" : page.url()).origin;

export async function apiPost<T>(page: Page, path: string, data?: unknown, status = 201): Promise<T> {
  const res = await page.request.post(path, { headers: { origin: origin(page) }, data });
  expect(res.status(), await res.text()).toBe(status);
  return (await res.json()) as T;
}

export async function apiPatch<T>(page: Page, path: string, data: unknown): Promise<T> {
  const res = await page.request.patch(path, { headers: { origin: origin(page) }, data });
  expect(res.status(), await res.text()).toBe(200);
  return (await res.json()) as T;
}

export async function uploadCsv(page: Page, name: string, csv: string): Promise<{ uploadId: string; columns: string[] }> {
  const res = await page.request.post("/api/uploads", {
    headers: { origin: origin(page) },
    multipart: { file: { name, mimeType: "text/csv", buffer: Buffer.from(csv) } },
  });
  expect(res.status(), await res.text()).toBe(201);
  return (await res.json()) as { uploadId: string; columns: string[] };
}

/** TRIGGER → DATA_SOURCE → FILTER → OUTPUT, with positions so the canvas is predictable. */
export function thanksGraph(uploadId: string, options: { expr?: string; subject?: string; extraFilter?: boolean } = {}) {
  const nodes = [
    { id: "start", type: "TRIGGER", data: {}, position: { x: 0, y: 0 } },
    { id: "src", type: "DATA_SOURCE", data: { uploadId }, position: { x: 0, y: 160 } },
    { id: "happy", type: "FILTER", data: { source: "{{src.rows}}", expr: options.expr ?? "rating >= 4" }, position: { x: 0, y: 320 } },
    {
      id: "mail",
      type: "OUTPUT",
      data: { forEach: "{{happy.items}}", to: "{{item.email}}", subject: options.subject ?? "Thanks {{item.name}}", body: "Hi {{item.name}}" },
      position: { x: 0, y: 480 },
    },
  ];
  const edges = [
    { source: "start", target: "src" },
    { source: "src", target: "happy" },
    { source: "happy", target: "mail" },
  ];
  if (options.extraFilter) {
    nodes.push({ id: "vip", type: "FILTER", data: { source: "{{happy.items}}", expr: "rating >= 5" }, position: { x: 320, y: 480 } });
    edges.push({ source: "happy", target: "vip" });
  }
  return { nodes, edges };
}

export const people = (tag: string, extra = 0) =>
  ["name,email,rating", `Ada,ada-${tag}@example.com,5`, `Grace,grace-${tag}@example.com,4`, `Alan,alan-${tag}@example.com,2`]
    .concat(Array.from({ length: extra }, (_, i) => `P${i},p${i}-${tag}@example.com,${i % 6}`))
    .join("\n") + "\n";

export async function waitForRun(page: Page, runId: string, status = "SUCCESS") {
  await expect
    .poll(async () => ((await (await page.request.get(`/api/workflows/runs/${runId}`)).json()) as { status: string }).status, { timeout: 60_000 })
    .toBe(status);
}
