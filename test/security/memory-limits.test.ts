// What the server reads from outside or builds for one request has a size limit: an AI answer (read up to 4 MiB,
// then refused), each rendered email (subject and body), the bodies one OUTPUT node holds, and each page of a run's
// emails (4 MiB, with `nextOffset` to page on). Sizes are counted, never timed.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateText } from "ai";
import { getDb } from "@/db/client";
import { emailSends, runs, workflows } from "@/db/schema";
import { languageModel } from "@/lib/ai/model";
import { newId } from "@/lib/ids";
import { createProviderFetch, MAX_AI_RESPONSE_BYTES } from "@/lib/net/provider-fetch";
import { fakeRuntime } from "@/lib/nodes/__tests__/fake-runtime";
import { MAX_BODY_BYTES, MAX_HELD_BODY_BYTES, renderAllEmails } from "@/lib/nodes/output/render-emails";
import { NodeError, type NodeOf } from "@/lib/nodes/types";
import { MAX_EMAILS_PAGE_BYTES } from "@/lib/services/runs/list-run-emails";
import { createTestAccount } from "@/test/support/accounts";
import { listEmails } from "@/test/sending/helpers";

const MIB = 1024 * 1024;

describe("an AI answer is read up to its limit", () => {
  let server: http.Server;
  let base: string;
  let written = 0;

  beforeAll(async () => {
    // A 300 MB answer, written as fast as the client reads it; the count says how much the client took.
    server = http.createServer((req, res) => {
      req.resume();
      written = 0;
      res.writeHead(200, { "content-type": "application/json" });
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      const pump = () => {
        while (written < 300 * MIB) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once("drain", pump);
        }
        res.end();
      };
      res.on("close", () => res.removeAllListeners("drain"));
      pump();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it("refuses a 300 MB answer as HTTP 413 with a sentence naming the limit, having read little more than the limit", async () => {
    const res = await createProviderFetch({ allowPrivate: true })(`${base}/chat/completions`, { method: "POST", body: "{}" });
    expect(res.status).toBe(413);
    expect((await res.json()).error.message).toBe(
      "The AI provider's answer was larger than 4 MiB, the limit for one answer; nothing past the limit was read",
    );
    // What the server could write before the client closed: the limit plus the sockets' buffers, not 300 MB.
    expect(written).toBeLessThan(MAX_AI_RESPONSE_BYTES + 16 * MIB);
  });

  it("fails the AI call with that sentence, without retrying it", async () => {
    const model = languageModel({ provider: "openai-compatible", apiKey: "sk-test", model: "m", baseUrl: base } as never, "m");
    const error = (await generateText({ model, prompt: "hi" }).then(
      () => undefined,
      (e: unknown) => e,
    )) as Error & { statusCode?: number };
    expect(error.statusCode).toBe(413);
    expect(error.message).toMatch(/larger than 4 MiB, the limit for one answer/);
  });
});

describe("rendered emails have size limits", () => {
  const output = (body: string, subject = "Hi") =>
    ({ id: "out", type: "OUTPUT", data: { forEach: "{{src.rows}}", to: "{{item.email}}", subject, body } }) as NodeOf<"OUTPUT">;
  const items = (n: number, text: string) => Array.from({ length: n }, (_, i) => ({ email: `p${i}@example.com`, text }));

  it("fails an email whose body is larger than the limit, naming it (so a 2,500 × 489 KB preview is refused)", async () => {
    const rt = { ...fakeRuntime({}), mode: "preview" as const };
    const error = await renderAllEmails(output("{{item.text}}"), rt, items(2_500, "x".repeat(489 * 1024))).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NodeError);
    expect((error as Error).message).toBe(
      "2500 of 2500 emails could not be rendered, so none was sent: item 0: the body is 489 KiB, more than 256 KiB, the limit for one email's body; " +
        "item 1: the body is 489 KiB, more than 256 KiB, the limit for one email's body; item 2: the body is 489 KiB, more than 256 KiB, the limit for one email's body (and 2497 more).",
    );
  });

  it("counts a body's UTF-8 bytes, and refuses a subject past 998 characters", async () => {
    const wide = "é".repeat(MAX_BODY_BYTES / 2 + 1); // fewer characters than the limit, more bytes
    const body = await renderAllEmails(output("{{item.text}}"), fakeRuntime({}), items(1, wide)).catch((e: Error) => e.message);
    expect(body).toMatch(/item 0: the body is 257 KiB, more than 256 KiB/);
    const subject = await renderAllEmails(output("ok", "{{item.text}}"), fakeRuntime({}), items(1, "s".repeat(999))).catch((e: Error) => e.message);
    expect(subject).toMatch(/item 0: the subject has 999 characters, more than 998, the limit for one subject/);
  });

  it("fails a preview whose bodies together pass what one node holds", async () => {
    const rt = { ...fakeRuntime({}), mode: "preview" as const };
    const perEmail = 200 * 1024;
    const error = await renderAllEmails(output("{{item.text}}"), rt, items(200, "y".repeat(perEmail))).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/^The previewed emails' bodies come to more than 32 MiB together \(at item 163\), the limit for one preview/);
    expect(Math.floor(MAX_HELD_BODY_BYTES / perEmail)).toBe(163);
  });

  it("keeps at most that much for a live send, the other bodies to be rendered again batch by batch", async () => {
    const perEmail = 200 * 1024;
    const emails = await renderAllEmails(output("{{item.text}}"), fakeRuntime({}), items(200, "y".repeat(perEmail)));
    expect(emails).toHaveLength(200);
    const kept = emails.filter((e) => !e.bodyDropped);
    expect(kept).toHaveLength(163);
    expect(kept.reduce((sum, e) => sum + (e.text?.length ?? 0), 0)).toBeLessThanOrEqual(MAX_HELD_BODY_BYTES);
    expect(emails.filter((e) => e.bodyDropped).every((e) => e.text === undefined && e.to.endsWith("@example.com"))).toBe(true);
  });
});

describe("a page of a run's emails has a byte limit", () => {
  it("returns fewer items than asked once the page reaches 4 MiB, and nextOffset pages on through all of them", async () => {
    const db = await getDb();
    const account = await createTestAccount();
    const workflowId = newId("wf");
    const graph = { nodes: [{ id: "out", type: "OUTPUT", data: {} }], edges: [] };
    await db.insert(workflows).values({ id: workflowId, accountId: account.id, name: "Big previews", graph });
    const runId = newId("run");
    await db.insert(runs).values({ id: runId, workflowId, accountId: account.id, workflowVersion: 1, graph, status: "SUCCESS" });
    const body = "z".repeat(300 * 1024);
    await db.insert(emailSends).values(
      Array.from({ length: 40 }, (_, i) => ({
        id: newId("eml"),
        runId,
        nodeId: "out",
        itemIndex: i,
        accountId: account.id,
        to: `p${i}@example.com`,
        subject: `Hello ${i}`,
        status: "preview" as const,
        body,
        format: "text" as const,
      })),
    );
    const seen: number[] = [];
    let offset: number | null = 0;
    let pages = 0;
    while (offset !== null) {
      const res = await listEmails(account.token, runId, "out", `?limit=1000&offset=${offset}`);
      expect(res.status).toBe(200);
      pages++;
      const bytes = res.body.items.reduce((sum: number, item: { body: string }) => sum + item.body.length, 0);
      expect(bytes).toBeLessThanOrEqual(MAX_EMAILS_PAGE_BYTES);
      expect(res.body.total).toBe(40);
      seen.push(...res.body.items.map((item: { index: number }) => item.index));
      offset = res.body.nextOffset;
    }
    // 13 bodies of 300 KiB (and their rows) fit in 4 MiB: four pages for 40.
    expect(pages).toBe(4);
    expect(seen).toEqual(Array.from({ length: 40 }, (_, i) => i));
  });

  it("a page within the limit is the page asked for", async () => {
    const db = await getDb();
    const account = await createTestAccount();
    const workflowId = newId("wf");
    const graph = { nodes: [{ id: "out", type: "OUTPUT", data: {} }], edges: [] };
    await db.insert(workflows).values({ id: workflowId, accountId: account.id, name: "Small", graph });
    const runId = newId("run");
    await db.insert(runs).values({ id: runId, workflowId, accountId: account.id, workflowVersion: 1, graph, status: "SUCCESS" });
    await db.insert(emailSends).values(
      Array.from({ length: 30 }, (_, i) => ({ id: newId("eml"), runId, nodeId: "out", itemIndex: i, accountId: account.id, to: `p${i}@example.com`, subject: "Hi", status: "sent" as const })),
    );
    const first = await listEmails(account.token, runId, "out", "?limit=20");
    expect(first.body.items).toHaveLength(20);
    expect(first.body.nextOffset).toBe(20);
    const last = await listEmails(account.token, runId, "out", "?limit=20&offset=20");
    expect(last.body.items).toHaveLength(10);
    expect(last.body.nextOffset).toBeNull();
  });
});
