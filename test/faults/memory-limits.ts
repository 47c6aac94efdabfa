/**
 * Can one answer, one preview or a few page requests fill the server's memory? Prints figures (not a test: run it
 * by hand, on PostgreSQL, since the server runs in another process):
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx --conditions=react-server test/faults/memory-limits.ts
 *
 * A server process (test/faults/api-server-worker.ts) executes, one after the other:
 *   1. an AI node whose provider (a local fake, openai-compatible) answers 300 MB;
 *   2. a preview of an OUTPUT rendering a 489 KB body for each of 2,500 items;
 *   3. five concurrent `GET …/emails?limit=1000` of a preview whose 1,000 stored bodies are 171 KB each.
 * Each must be refused or cut with a sentence (1, 2) or a page of at most 4 MiB (3), the server's RSS must grow by at
 * most 250 MB over its level before, and `GET /api/health` (asked every 50 ms from this process) must answer within
 * 250 ms throughout. The load average is printed beside the figures.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { signAccessToken } from "@/lib/auth/tokens";
import { benchAccount, benchDb, benchEnv, benchExit, benchUpload, benchWorkflow, mb } from "@/bench/bench-support";
import { loadAverage, treeRss } from "@/bench/server-support";
import { getDb } from "@/db/client";
import { emailSends, runs } from "@/db/schema";
import { newId } from "@/lib/ids";
import { setAiProvider } from "@/lib/services/accounts/account-settings";
import { call, startApiServer, waitFinal, watch, type Run } from "./api-figures";

const MIB = 1024 * 1024;
const message = (run: Run) => (typeof run.error === "string" ? run.error : (run.error?.message ?? ""));

/** An openai-compatible fake that answers `bytes` of JSON-looking text to every call, as fast as it is read. */
async function hugeAnswerServer(bytes: number): Promise<{ url: string; close: () => Promise<void>; written: () => number }> {
  let written = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    res.writeHead(200, { "content-type": "application/json" });
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    let sent = 0;
    const pump = () => {
      while (sent < bytes) {
        sent += chunk.length;
        written += chunk.length;
        if (!res.write(chunk)) return void res.once("drain", pump);
      }
      res.end();
    };
    res.on("close", () => res.removeAllListeners("drain"));
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    written: () => written,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

async function main(): Promise<void> {
  if (!process.env.DATABASE_URL) throw new Error("set DATABASE_URL to a PostgreSQL server: the server runs in another process");
  benchEnv({ ALLOW_PRIVATE_NETWORK_TARGETS: "true" });
  await benchDb();
  const accountId = await benchAccount();
  const token = await signAccessToken(accountId);
  const fake = await hugeAnswerServer(300 * 1000 * 1000);
  await setAiProvider(accountId, { provider: "openai-compatible", apiKey: "sk-test-1234", model: "m", baseUrl: fake.url });
  const at = (x: number) => ({ x, y: 0 });
  const aiWorkflow = await benchWorkflow(accountId, {
    nodes: [
      { id: "t", type: "TRIGGER", position: at(0), data: {} },
      { id: "ai", type: "AI", position: at(200), data: { prompt: "Say a lot", output: [{ name: "summary", type: "string" }] } },
    ],
    edges: [{ source: "t", target: "ai" }],
  });
  const people = await benchUpload(accountId, ["email"], 2_500, (i) => [`p${i}@example.com`]);
  // The body: 489 KB of text around the recipient's address, rendered for each of the 2,500 items.
  const body = `Dear {{item.email}},\n${"Lorem ipsum dolor sit amet. ".repeat(17_500)}`;
  const previewWorkflow = await benchWorkflow(accountId, {
    nodes: [
      { id: "t", type: "TRIGGER", position: at(0), data: {} },
      { id: "src", type: "DATA_SOURCE", position: at(200), data: { uploadId: people } },
      { id: "out", type: "OUTPUT", position: at(400), data: { forEach: "{{src.rows}}", to: "{{item.email}}", subject: "Hi", body } },
    ],
    edges: [{ source: "t", target: "src" }, { source: "src", target: "out" }],
  });
  // A preview recorded before bodies had a limit: 1,000 stored bodies of 171 KB.
  const storedRun = newId("run");
  const db = await getDb();
  await db.insert(runs).values({ id: storedRun, workflowId: previewWorkflow, accountId, workflowVersion: 1, graph: { nodes: [{ id: "out", type: "OUTPUT", data: {} }], edges: [] }, status: "SUCCESS", mode: "preview" } as never);
  for (let start = 0; start < 1_000; start += 50) {
    await db.insert(emailSends).values(
      Array.from({ length: 50 }, (_, k) => ({ id: newId("eml"), runId: storedRun, nodeId: "out", itemIndex: start + k, accountId, to: `p${start + k}@example.com`, subject: "Hi", status: "preview" as const, body: `${start + k} `.padEnd(171 * 1000, "lorem ipsum "), format: "text" as const })),
    );
  }

  const server = await startApiServer();
  const failures: string[] = [];
  try {
    await call(server.url, token, "GET", "/api/health");
    await call(server.url, token, "GET", `/api/workflows/runs/${storedRun}/nodes/out/emails?limit=1`);
    // Once unmeasured: the first AI call of a process loads the AI SDK's modules, which is not the answer's doing.
    await waitFinal(server.url, token, (await call(server.url, token, "POST", `/api/workflows/${aiWorkflow}/run`)).body.runId, 120_000);
    const baseline = treeRss(server.pid);
    console.log(`load before: ${loadAverage()}; server RSS before: ${mb(baseline)} MB`);
    const check = (label: string, figures: Awaited<ReturnType<ReturnType<typeof watch>["stop"]>>) => {
      const growth = figures.peakRssMb - mb(baseline);
      console.log(`   health ${JSON.stringify({ n: figures.n, p50: figures.p50, p99: figures.p99, max: figures.max })}; peak RSS ${figures.peakRssMb} MB (+${growth} MB)`);
      if (figures.max > 250) failures.push(`${label}: health took ${figures.max} ms`);
      if (growth > 250) failures.push(`${label}: RSS grew by ${growth} MB`);
    };

    let watcher = watch(server.url, server.pid);
    const aiRun = await waitFinal(server.url, token, (await call(server.url, token, "POST", `/api/workflows/${aiWorkflow}/run`)).body.runId, 120_000);
    console.log(`1. a 300 MB AI answer: run ${aiRun.status}: ${message(aiRun)}`);
    console.log(`   the fake provider wrote ${mb(fake.written())} MB before the server closed the connection`);
    if (aiRun.status !== "FAILED" || !/limit/.test(message(aiRun))) failures.push("1: not refused with a sentence naming the limit");
    check("1", await watcher.stop());

    watcher = watch(server.url, server.pid);
    const preview = await call(server.url, token, "POST", `/api/workflows/${previewWorkflow}/run`, { mode: "preview" });
    const previewRun = await waitFinal(server.url, token, preview.body.runId, 300_000);
    console.log(`2. a 2,500 × 490 KB preview: run ${previewRun.status}: ${message(previewRun).slice(0, 240)}`);
    if (previewRun.status !== "FAILED" || !/limit/.test(message(previewRun))) failures.push("2: not refused with a sentence naming the limit");
    check("2", await watcher.stop());

    watcher = watch(server.url, server.pid);
    const pages = await Promise.all(
      Array.from({ length: 5 }, async () => {
        const res = await fetch(`${server.url}/api/workflows/runs/${storedRun}/nodes/out/emails?limit=1000`, { headers: { authorization: `Bearer ${token}` } });
        const text = await res.text();
        const body = JSON.parse(text);
        return { status: res.status, bytes: text.length, items: body.items.length, nextOffset: body.nextOffset };
      }),
    );
    console.log(`3. five concurrent pages of 1,000 × 171 KB: ${pages.map((p) => `${p.status} ${p.items} items, ${(p.bytes / MIB).toFixed(1)} MiB, nextOffset ${p.nextOffset}`).join("; ")}`);
    if (pages.some((p) => p.bytes > 4.5 * MIB || p.nextOffset === null)) failures.push("3: a page was larger than its limit, or did not say where to page on");
    check("3", await watcher.stop());
    console.log(`load after: ${loadAverage()}`);
  } finally {
    server.kill();
    await fake.close();
  }
  console.log(failures.length ? `NOT MET: ${failures.join("; ")}` : "all targets met");
  await benchExit(failures.length ? 1 : 0);
}

main().catch(async (error: unknown) => {
  console.error(error);
  await benchExit(2);
});
