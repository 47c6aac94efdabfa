// Every AI provider given a base URL (openai, anthropic, openai-compatible) calls it through the guarded fetch: the
// address is checked at call time and pinned (a name that now resolves inside the network is refused, whatever it
// resolved to when saved), no redirect is followed (a 307 must not forward the prompt and its CSV data to a port on
// loopback), and an error body reaches the SDK's error (hence logs and run logs) only cleaned and short.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";

const answers: Record<string, string[]> = { "rebound.example": ["127.0.0.1"], "pinned.test": ["127.0.0.1"] };
vi.mock("node:dns/promises", () => ({
  lookup: vi.fn(async (host: string) => {
    const list = answers[host];
    if (!list) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    return list.map((address) => ({ address, family: 4 }));
  }),
}));

const { generateText } = await import("ai");
const { languageModel } = await import("@/lib/ai/model");
const { resetConfig } = await import("@/lib/config");

type Provider = "openai" | "anthropic" | "openai-compatible";
const PROVIDERS: Provider[] = ["openai", "anthropic", "openai-compatible"];
const SECRET_ROW = "alice@example.com,4111 1111 1111 1111";
const LEAKY = `<html><body><pre>FATAL: password authentication failed for user "flowmail"
    at Parser.parseErrorMessage (/srv/app/node_modules/pg-protocol/dist/parser.js:287:98)
SELECT id, password_hash FROM users WHERE email = 'a@b.c'</pre>${"x".repeat(50_000)}</body></html>`;

let internal: http.Server;
let internalHits = 0;
let front: http.Server;
let frontPort = 0;
let mode: "redirect" | "leaky-json" | "leaky-html" | "ok" = "redirect";

function listen(server: http.Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)));
}

beforeAll(async () => {
  // Stands for PostgreSQL or Redis on loopback: nothing may ever reach it.
  internal = http.createServer((req, res) => {
    internalHits++;
    req.resume();
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
  const internalPort = await listen(internal);
  front = http.createServer((req, res) => {
    req.resume();
    if (mode === "redirect") return void res.writeHead(307, { location: `http://127.0.0.1:${internalPort}/v1/chat/completions` }).end();
    if (mode === "leaky-json") {
      return void res
        .writeHead(400, { "content-type": "application/json" })
        .end(JSON.stringify({ type: "error", error: { type: "invalid_request_error", message: LEAKY } }));
    }
    if (mode === "leaky-html") return void res.writeHead(400, { "content-type": "text/html" }).end(LEAKY);
    const anthropic = req.url?.endsWith("/messages");
    res.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify(
        anthropic
          ? { id: "m", type: "message", role: "assistant", model: "m", content: [{ type: "text", text: "pong" }], stop_reason: "end_turn", usage: { input_tokens: 1, output_tokens: 1 } }
          : { id: "c", object: "chat.completion", created: 1, model: "m", choices: [{ index: 0, message: { role: "assistant", content: "pong" }, finish_reason: "stop" }] },
      ),
    );
  });
  frontPort = await listen(front);
});

afterAll(async () => {
  for (const server of [internal, front]) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

afterEach(() => {
  delete process.env.ALLOW_PRIVATE_NETWORK_TARGETS;
  resetConfig();
});

function allowPrivate(allowed: boolean) {
  process.env.ALLOW_PRIVATE_NETWORK_TARGETS = String(allowed);
  resetConfig();
}

async function ask(provider: Provider, baseUrl: string): Promise<{ text?: string; error?: any }> {
  const model = languageModel({ provider, apiKey: "sk-test-1234", model: "m", baseUrl } as never, "m");
  try {
    const result = await generateText({ model, prompt: `Summarise: ${SECRET_ROW}`, maxRetries: 0 });
    return { text: result.text };
  } catch (error) {
    return { error };
  }
}

function expectClean(text: string) {
  expect(text).not.toMatch(/\/srv\/app|node_modules|password_hash|SELECT|<html|<pre>|parser\.js/);
  expect(text.length).toBeLessThan(400);
}

describe.each(PROVIDERS)("the %s provider with a base URL", (provider) => {
  it("answers through the guarded fetch, connecting to the pinned address of its host", async () => {
    allowPrivate(true);
    mode = "ok";
    const { text, error } = await ask(provider, `http://pinned.test:${frontPort}/v1`);
    expect(error).toBeUndefined();
    expect(text).toBe("pong");
  });

  it("does not follow a redirect to loopback, even where private targets are allowed", async () => {
    allowPrivate(true);
    mode = "redirect";
    const before = internalHits;
    const { error } = await ask(provider, `http://127.0.0.1:${frontPort}/v1`);
    expect(internalHits).toBe(before);
    expect(error?.message).toMatch(/redirect \(HTTP 307\); redirects are not followed/);
    expect(error?.statusCode).toBe(307);
  });

  it("refuses a base URL whose name now resolves to loopback when private targets are not allowed", async () => {
    allowPrivate(false);
    mode = "ok";
    const before = internalHits;
    const { error } = await ask(provider, `https://rebound.example/v1`);
    expect(String(error?.message)).toMatch(/rebound\.example resolves to 127\.0\.0\.1 \(loopback\); only public addresses are allowed/);
    expect(internalHits).toBe(before);
  });

  it.each(["leaky-json", "leaky-html"] as const)("passes on only a cleaned, short message of a %s error body", async (leak) => {
    allowPrivate(true);
    mode = leak;
    const { error } = await ask(provider, `http://127.0.0.1:${frontPort}/v1`);
    expect(error?.statusCode).toBe(400);
    expect(error?.message).toMatch(/password authentication failed/);
    expectClean(error.message);
    // The SDK's error keeps the body it was given, and the server log prints it: that body is the cleaned one too.
    expectClean(String(error.responseBody));
  });
});
