import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A local batch API, for tests that drive the AI SDK's batch support against either provider's wire format:
 * - `openai`: POST /v1/files (the JSONL input, multipart), POST /v1/batches (its `metadata` kept and shown),
 *   GET /v1/batches/:id, GET /v1/batches?limit=&after= (newest first), POST /v1/batches/:id/cancel,
 *   GET /v1/files/:id/content (the output file: one Responses API body per item);
 * - `anthropic`: POST /v1/messages/batches, GET /v1/messages/batches/:id, GET /v1/messages/batches?limit=&after_id=
 *   (newest first), POST …/:id/cancel, GET …/:id/results.
 *
 *   const api = await startFakeBatchApi("openai", { finishAfterMs: 90_000 });
 *   // account settings: provider "openai" (or "anthropic"), baseUrl api.url (ends in /v1)
 *   api.answer((userText) => ({ greeting: "…" }))   // the `answer` tool's input; { error: "…" } refuses the item
 *   api.batches        // every batch created: { id, items, status, cancelled, polls }
 *   api.finish()       // ends every open batch at the next poll, whatever finishAfterMs says
 *   api.stats          // { created, polls, cancels, resultReads, files, lists }
 * A batch ends `finishAfterMs` after it was created (or, with `finishAfterPolls`, at its n-th status poll): its
 * answers are made then (the answer function is asked once per item of a batch), and a cancelled batch ends with its
 * items cancelled.
 */
export type FakeBatch = {
  id: string;
  createdAt: number;
  items: { customId: string; text: string }[];
  status: "in_progress" | "cancelling" | "ended";
  cancelled: boolean;
  results: string[] | null;
  polls: number;
  /** OpenAI: the metadata it was created with. */
  metadata: Record<string, string> | null;
};

export type FakeBatchApi = {
  url: string;
  provider: "openai" | "anthropic";
  batches: FakeBatch[];
  answer(fn: (userText: string) => Record<string, unknown> | { error: string }): void;
  finish(): void;
  /** Answers 503 to the next `n` status polls (a provider having a bad moment). */
  failPolls(n: number): void;
  /** Refuses the next batch creation with a 400 and this message. */
  refuseNextBatch(message: string): void;
  stats: { created: number; polls: number; cancels: number; resultReads: number; files: number; lists: number };
  close(): Promise<void>;
};

export const BATCH_INPUT_TOKENS = 20;
export const BATCH_OUTPUT_TOKENS = 10;

/** All `text` strings under a value (the user's content blocks of either wire format). */
function texts(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.flatMap(texts);
  if (value && typeof value === "object") {
    const record = value as Record<string, unknown>;
    if (typeof record.text === "string") return [record.text];
    if ("content" in record) return texts(record.content);
  }
  return [];
}

function userText(messages: unknown): string {
  if (!Array.isArray(messages)) return "";
  return messages.filter((m) => (m as { role?: string }).role === "user").flatMap((m) => texts((m as { content?: unknown }).content)).join("\n");
}

export async function startFakeBatchApi(provider: "openai" | "anthropic", options: { finishAfterMs?: number; finishAfterPolls?: number } = {}): Promise<FakeBatchApi> {
  const finishAfterMs = options.finishAfterMs ?? (options.finishAfterPolls ? Infinity : 0);
  const finishAfterPolls = options.finishAfterPolls ?? Infinity;
  const batches: FakeBatch[] = [];
  const files = new Map<string, string[]>();
  let respond: (text: string) => Record<string, unknown> | { error: string } = () => ({});
  let forceFinish = false;
  let failingPolls = 0;
  let refusal: string | null = null;
  const stats = { created: 0, polls: 0, cancels: 0, resultReads: 0, files: 0, lists: 0 };
  let counter = 0;
  const nextId = (prefix: string) => `${prefix}${(++counter).toString(36).padStart(6, "0")}`;
  let base = "";

  /** Ends the batch if its time has come; makes its result lines once. */
  const advance = (batch: FakeBatch) => {
    if (batch.status === "ended") return;
    if (!batch.cancelled && !forceFinish && Date.now() - batch.createdAt < finishAfterMs && batch.polls < finishAfterPolls) return;
    batch.status = "ended";
    batch.results = batch.items.map((item) => (batch.cancelled ? cancelledLine(item.customId) : answerLine(item.customId, respond(item.text))));
  };

  const answerLine = (customId: string, answer: Record<string, unknown> | { error: string }): string => {
    const refused = typeof (answer as { error?: unknown }).error === "string" && Object.keys(answer).length === 1;
    if (provider === "openai") {
      if (refused) {
        return JSON.stringify({ id: nextId("batch_req_"), custom_id: customId, response: { status_code: 400, request_id: nextId("req_"), body: { error: { message: (answer as { error: string }).error, type: "invalid_request_error", param: null, code: "invalid_prompt" } } }, error: null });
      }
      const body = {
        id: nextId("resp_"),
        object: "response",
        created_at: Math.floor(Date.now() / 1000),
        model: "gpt-4o-mini",
        status: "completed",
        output: [{ type: "function_call", id: nextId("fc_"), call_id: nextId("call_"), name: "answer", arguments: JSON.stringify(answer), status: "completed" }],
        usage: { input_tokens: BATCH_INPUT_TOKENS, input_tokens_details: { cached_tokens: 0 }, output_tokens: BATCH_OUTPUT_TOKENS, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: BATCH_INPUT_TOKENS + BATCH_OUTPUT_TOKENS },
      };
      return JSON.stringify({ id: nextId("batch_req_"), custom_id: customId, response: { status_code: 200, request_id: nextId("req_"), body }, error: null });
    }
    if (refused) {
      return JSON.stringify({ custom_id: customId, result: { type: "errored", error: { type: "error", error: { type: "invalid_request_error", message: (answer as { error: string }).error }, request_id: nextId("req_") } } });
    }
    const message = {
      id: nextId("msg_"),
      type: "message",
      role: "assistant",
      model: "claude-3-5-haiku-latest",
      content: [{ type: "tool_use", id: nextId("toolu_"), name: "answer", input: answer }],
      stop_reason: "tool_use",
      stop_sequence: null,
      usage: { input_tokens: BATCH_INPUT_TOKENS, output_tokens: BATCH_OUTPUT_TOKENS },
    };
    return JSON.stringify({ custom_id: customId, result: { type: "succeeded", message } });
  };

  const cancelledLine = (customId: string) =>
    provider === "openai"
      ? JSON.stringify({ id: nextId("batch_req_"), custom_id: customId, response: null, error: { code: "batch_cancelled", message: "This request was cancelled with its batch." } })
      : JSON.stringify({ custom_id: customId, result: { type: "canceled" } });

  const openaiBatch = (batch: FakeBatch) => {
    const failed = batch.results?.filter((line) => !line.includes('"status_code":200')).length ?? 0;
    const status = batch.status === "ended" ? (batch.cancelled ? "cancelled" : "completed") : batch.status;
    return {
      id: batch.id,
      object: "batch",
      endpoint: "/v1/responses",
      status,
      input_file_id: `file-in-${batch.id}`,
      output_file_id: batch.status === "ended" ? `file-out-${batch.id}` : null,
      error_file_id: null,
      created_at: Math.floor(batch.createdAt / 1000),
      expires_at: Math.floor(batch.createdAt / 1000) + 86_400,
      request_counts: { total: batch.items.length, completed: batch.status === "ended" ? batch.items.length - failed : 0, failed },
      metadata: batch.metadata,
    };
  };

  const anthropicBatch = (batch: FakeBatch) => {
    const ended = batch.status === "ended";
    const count = (type: string) => (ended ? (batch.results ?? []).filter((line) => line.includes(`"type":"${type}"`)).length : 0);
    return {
      id: batch.id,
      type: "message_batch",
      processing_status: ended ? "ended" : batch.status === "cancelling" ? "canceling" : "in_progress",
      request_counts: { processing: ended ? 0 : batch.items.length, succeeded: count("succeeded"), errored: count("errored"), canceled: count("canceled"), expired: 0 },
      created_at: new Date(batch.createdAt).toISOString(),
      expires_at: new Date(batch.createdAt + 86_400_000).toISOString(),
      archived_at: null,
      cancel_initiated_at: batch.cancelled ? new Date().toISOString() : null,
      ended_at: ended ? new Date().toISOString() : null,
      results_url: ended ? `${base}/messages/batches/${batch.id}/results` : null,
    };
  };

  const view = (batch: FakeBatch) => (provider === "openai" ? openaiBatch(batch) : anthropicBatch(batch));

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      const url = new URL(req.url ?? "/", "http://fake");
      const path = url.pathname;
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      };
      const jsonl = (lines: string[]) => {
        res.writeHead(200, { "content-type": "application/x-ndjson" });
        res.end(lines.join("\n") + "\n");
      };
      const notFound = () => json(404, { error: { message: `No such route ${req.method} ${path}`, type: "not_found_error" } });
      const find = (id: string) => batches.find((b) => b.id === id);
      const refuseCreate = () => {
        if (refusal === null) return false;
        json(400, { type: "error", error: { message: refusal, type: "invalid_request_error", code: "invalid_batch" } });
        refusal = null;
        return true;
      };
      const create = (items: FakeBatch["items"], metadata: Record<string, string> | null = null) => {
        const batch: FakeBatch = { id: nextId(provider === "openai" ? "batch_" : "msgbatch_"), createdAt: Date.now(), items, status: "in_progress", cancelled: false, results: null, polls: 0, metadata };
        batches.push(batch);
        stats.created++;
        return batch;
      };
      const poll = (batch: FakeBatch) => {
        stats.polls++;
        batch.polls++;
        if (failingPolls > 0) {
          failingPolls--;
          return json(503, { error: { message: "The batch service is overloaded", type: "server_error" } });
        }
        advance(batch);
        json(200, view(batch));
      };
      /** A page of the batches, newest first, after the cursor's batch. */
      const list = (cursorParam: string) => {
        stats.lists++;
        const limit = Math.min(Number(url.searchParams.get("limit") ?? 20), provider === "openai" ? 100 : 1000);
        const newest = [...batches].reverse();
        const cursor = url.searchParams.get(cursorParam);
        const from = cursor ? newest.findIndex((b) => b.id === cursor) + 1 : 0;
        const page = newest.slice(from, from + limit);
        for (const batch of page) advance(batch);
        const more = from + limit < newest.length;
        if (provider === "openai") return json(200, { object: "list", data: page.map(view), first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null, has_more: more });
        json(200, { data: page.map(view), first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null, has_more: more });
      };
      const cancel = (batch: FakeBatch) => {
        stats.cancels++;
        if (batch.status !== "ended") {
          batch.cancelled = true;
          batch.status = "cancelling";
        }
        json(200, view(batch));
      };

      if (provider === "openai") {
        if (req.method === "POST" && path === "/v1/files") {
          // The multipart body's file part: the JSONL lines, one request each.
          const lines = raw.split(/\r?\n/).filter((line) => line.startsWith('{"custom_id"'));
          const id = nextId("file-");
          files.set(id, lines);
          stats.files++;
          return json(200, { id, object: "file", bytes: raw.length, created_at: Math.floor(Date.now() / 1000), filename: "batch.jsonl", purpose: "batch", status: "processed" });
        }
        if (req.method === "POST" && path === "/v1/batches") {
          if (refuseCreate()) return;
          const body = JSON.parse(raw) as { input_file_id: string; endpoint: string; metadata?: Record<string, string> };
          const lines = files.get(body.input_file_id);
          if (!lines) return json(400, { error: { message: `No file ${body.input_file_id}`, type: "invalid_request_error", code: "invalid_file" } });
          const items = lines.map((line) => {
            const request = JSON.parse(line) as { custom_id: string; body: { input?: unknown } };
            return { customId: request.custom_id, text: userText(request.body.input) };
          });
          return json(200, view(create(items, body.metadata ?? null)));
        }
        if (req.method === "GET" && path === "/v1/batches") return list("after");
        let m = /^\/v1\/batches\/([^/]+)$/.exec(path);
        if (req.method === "GET" && m) return find(m[1]) ? poll(find(m[1])!) : notFound();
        m = /^\/v1\/batches\/([^/]+)\/cancel$/.exec(path);
        if (req.method === "POST" && m) return find(m[1]) ? cancel(find(m[1])!) : notFound();
        m = /^\/v1\/files\/file-out-([^/]+)\/content$/.exec(path);
        if (req.method === "GET" && m) {
          const batch = find(m[1]);
          if (!batch?.results) return notFound();
          stats.resultReads++;
          return jsonl(batch.results);
        }
        return notFound();
      }

      if (req.method === "POST" && path === "/v1/messages/batches") {
        if (refuseCreate()) return;
        const body = JSON.parse(raw) as { requests: { custom_id: string; params: { messages?: unknown } }[] };
        return json(200, view(create(body.requests.map((r) => ({ customId: r.custom_id, text: userText(r.params.messages) })))));
      }
      if (req.method === "GET" && path === "/v1/messages/batches") return list("after_id");
      let m = /^\/v1\/messages\/batches\/([^/]+)$/.exec(path);
      if (req.method === "GET" && m) return find(m[1]) ? poll(find(m[1])!) : notFound();
      m = /^\/v1\/messages\/batches\/([^/]+)\/cancel$/.exec(path);
      if (req.method === "POST" && m) return find(m[1]) ? cancel(find(m[1])!) : notFound();
      m = /^\/v1\/messages\/batches\/([^/]+)\/results$/.exec(path);
      if (req.method === "GET" && m) {
        const batch = find(m[1]);
        if (!batch?.results) return notFound();
        stats.resultReads++;
        return jsonl(batch.results);
      }
      notFound();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return {
    url: base,
    provider,
    batches,
    answer(fn) {
      respond = fn;
    },
    finish() {
      forceFinish = true;
    },
    failPolls(n) {
      failingPolls = n;
    },
    refuseNextBatch(message) {
      refusal = message;
    },
    stats,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
