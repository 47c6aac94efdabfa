import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A local OpenAI-compatible server (Chat Completions), for tests that drive the real AI SDK.
 *
 *   const ai = await startFakeOpenAI();
 *   // account settings: provider "openai-compatible", baseUrl ai.url (ends in /v1)
 *   ai.answer((req) => ({ summary: "…", people: [...] }))   // the JSON object the model "generates"
 *   ai.failNext(2, 500)     // the next 2 requests answer 500 (429 and 5xx are retried by the SDK)
 *   ai.hangNext(1)          // the next request never answers (timeouts); hangNext(0) stops that
 *   ai.requests             // every request body received (model, messages, response_format…)
 */
export type ChatRequest = {
  model: string;
  messages: { role: string; content: string }[];
  response_format?: { type: string; json_schema?: { schema: Record<string, unknown> } };
  temperature?: number;
  [key: string]: unknown;
};

export type FakeOpenAI = {
  url: string;
  requests: ChatRequest[];
  answer(fn: (req: ChatRequest) => unknown): void;
  answerText(fn: (req: ChatRequest) => string): void;
  failNext(count: number, status: number, message?: string): void;
  hangNext(count: number): void;
  close(): Promise<void>;
};

export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const requests: ChatRequest[] = [];
  let respond: (req: ChatRequest) => string = () => "{}";
  const failures: { status: number; message: string }[] = [];
  let hangs = 0;
  const hanging = new Set<http.ServerResponse>();

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
        res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "Not found" } }));
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as ChatRequest;
      requests.push(body);
      if (hangs > 0) {
        hangs--;
        hanging.add(res);
        return;
      }
      const failure = failures.shift();
      if (failure) {
        res
          .writeHead(failure.status, { "content-type": "application/json" })
          .end(JSON.stringify({ error: { message: failure.message, type: "server_error", code: null } }));
        return;
      }
      const content = respond(body);
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          id: `chatcmpl-${requests.length}`,
          object: "chat.completion",
          created: Math.floor(Date.now() / 1000),
          model: body.model,
          choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
          usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    answer: (fn) => {
      respond = (req) => JSON.stringify(fn(req));
    },
    answerText: (fn) => {
      respond = fn;
    },
    failNext: (count, status, message = `Fake failure ${status}`) => {
      for (let i = 0; i < count; i++) failures.push({ status, message });
    },
    hangNext: (count) => {
      hangs = count;
    },
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
