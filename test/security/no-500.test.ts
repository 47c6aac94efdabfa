import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { resetConfig } from "@/lib/config";
import { createTestAccount } from "@/test/support/accounts";
import { call, type CallOptions, type CallResult } from "@/test/support/http";

type Account = Awaited<ReturnType<typeof createTestAccount>>;
type Handler = Parameters<typeof call>[0];
type Case = { name: string; options: CallOptions };

const API_DIR = path.join(process.cwd(), "app/api");
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
const MIB = 1024 * 1024;

/** Every route file under app/api, as its URL pattern ("workflows/[workflowId]/run"). */
function routePatterns(dir = API_DIR): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) return routePatterns(full);
    return entry === "route.ts" ? [path.relative(API_DIR, dir).split(path.sep).join("/")] : [];
  });
}

// NextAuth's catch-all answers in its own formats (redirects, its own error pages):
// it must still never 500 or leak internals, but its 4xx bodies are not ours to shape.
const FOREIGN_FORMAT = new Set(["nextauth/[...nextauth]"]);

const HOSTILE_IDS = ["../../etc/passwd", "x".repeat(10 * 1024), "wf_ñ💥\u202e\u0000", "' OR 1=1 --", "%2e%2e%2f"];

const HOSTILE_QUERIES = [
  "limit=99999999999999999999999",
  "limit=-1",
  "limit=abc",
  "limit=1e400",
  "offset=-5&limit=0",
  "offset=NaN",
  "cursor=garbage!!",
  `cursor=${Buffer.from('{"t":"x","id":{"$gt":""}}').toString("base64url")}`,
  `cursor=${"A".repeat(10_000)}`,
  "limit=1&limit=2&cursor=a&cursor=b",
  "status=RUNNING%0d%0aX-Injected:1",
  "field=__proto__.polluted&nodeId=constructor",
  "code=x&state=../../etc/passwd",
  // One key at a time, so strict query schemas (unknown keys → 422) do not hide a value that reaches the database.
  ...["to", "cursor", "field", "q", "status", "offset", "nodes"].map((key) => `${key}=a%00b`),
  "code=%00&state=%00",
  "to=a%0d%0aBcc:%20x@example.com",
];

const jsonCase = (name: string, body: string, contentType = "application/json"): Case => ({
  name,
  options: { body, headers: { "content-type": contentType } },
});

function multipart(): FormData {
  const form = new FormData();
  form.append("email", "a@example.com");
  form.append("file", new File(["a,b\n1,2\n"], "x.csv", { type: "text/csv" }));
  return form;
}

/** A CSV whose filename and cells carry NUL, CRLF, path traversal and formula prefixes. */
function hostileUpload(): FormData {
  const form = new FormData();
  const csv = "name,email\r\n=cmd|' /C calc'!A0,\u0000@example.com\r\n\"a\r\nBcc: x\",b\r\n";
  form.append("file", new File([csv], "..\\..\u0000/etc/passwd\r\nX-Injected: 1.csv", { type: "text/csv" }));
  return form;
}

const CRLF_FIELDS = {
  email: "victim@example.com\r\nBcc: attacker@example.com",
  fullName: "Eve\r\nX-Injected: 1",
  subject: "Hi\r\nBcc: attacker@example.com",
  password: "correct horse battery staple\r\n",
  code: "123456\r\n",
  name: "wf\r\nX: 1",
  url: "https://example.com/\r\nHost: evil",
};

/** Request bodies for methods that carry one. */
const BODY_CASES: Case[] = [
  jsonCase("malformed JSON", '{"a":'),
  jsonCase("empty JSON body", ""),
  jsonCase("JSON array", "[1,2,3]"),
  jsonCase("JSON null", "null"),
  jsonCase("JSON string", '"hello"'),
  jsonCase("__proto__ pollution", '{"__proto__":{"polluted":true},"graph":{"__proto__":{"polluted":true}}}'),
  jsonCase("constructor.prototype pollution", '{"constructor":{"prototype":{"polluted":true}},"name":{"constructor":{"prototype":{"polluted":true}}}}'),
  jsonCase("2 MiB body", JSON.stringify({ name: "x".repeat(2 * MIB) })),
  jsonCase("deep nesting", "[".repeat(50_000) + "]".repeat(50_000)),
  jsonCase("text/plain", '{"email":"a@example.com"}', "text/plain"),
  jsonCase("no content type", '{"email":"a@example.com"}', ""),
  jsonCase("JSON with filepath", '{"filepath":"/etc/passwd","file":"/etc/passwd","filename":"../../etc/passwd"}'),
  jsonCase("CRLF in header-ish fields", JSON.stringify(CRLF_FIELDS)),
  jsonCase("NUL characters", JSON.stringify(Object.fromEntries(Object.keys(CRLF_FIELDS).map((k) => [k, "a\u0000b"])))),
  jsonCase("wrong types", '{"email":1,"password":[],"name":{},"graph":"x","url":null,"limit":-1}'),
  jsonCase("lying content-length", "{}", "application/json"),
  { name: "multipart to a JSON endpoint", options: { body: multipart() } },
  { name: "multipart with a hostile filename and cells", options: { body: hostileUpload() } },
  { name: "multipart without boundary", options: { body: "--x\r\n\r\n", headers: { "content-type": "multipart/form-data" } } },
];
BODY_CASES.find((c) => c.name === "lying content-length")!.options.headers!["content-length"] = String(50 * MIB);

const AUTH_CASES: Case[] = [
  { name: "no Authorization", options: {} },
  { name: "Basic auth", options: { headers: { authorization: "Basic YWRtaW46YWRtaW4=" } } },
  { name: "garbage bearer", options: { headers: { authorization: "Bearer ../../etc/passwd" } } },
  { name: "10 KB bearer", options: { headers: { authorization: `Bearer ${"a.".repeat(5000)}` } } },
  { name: "bearer with unicode", options: { headers: { authorization: "Bearer eyJ%E2%98%83.e30.x" } } },
  { name: "garbage cookie", options: { headers: { cookie: "authjs.session-token=../../etc; __Secure-authjs.session-token=x" } } },
];

const LEAKS: [string, RegExp][] = [
  ["stack frame", /\n\s+at |\bat [\w.<>]+ \(/],
  ["file path", /\/work\/|node_modules|\.ts:\d+/],
  ["JS error name", /\b(TypeError|ReferenceError|RangeError|SyntaxError|ZodError)\b/],
  ["database detail", /\b(relation|column) "|violates|duplicate key|pglite|postgres(ql)?:\/\/|ECONNREFUSED/i],
  ["SQL", /\b(select|insert into|update|delete from)\b.*\b(from|set|where)\b/i],
];

/** What is wrong with one response (empty when it keeps to the contract). */
function violations(res: CallResult, ours: boolean): string[] {
  const problems: string[] = [];
  if (res.status === 500 || res.body?.code === "internal_error") problems.push(`status ${res.status} internal_error`);
  if (res.status >= 500 && res.status !== 503) problems.push(`status ${res.status}`);
  const isProblem = res.headers.get("content-type") === "application/problem+json";
  if (ours && res.status >= 400 && !isProblem) problems.push(`content-type ${res.headers.get("content-type")}`);
  if (ours && res.status >= 400 && typeof res.body?.code !== "string") problems.push("no code");
  if (ours && res.status >= 400 && res.body?.status !== res.status) problems.push(`body.status ${res.body?.status}`);
  for (const [leak, pattern] of LEAKS) if (pattern.test(res.text)) problems.push(`leaks ${leak}`);
  if (/X-Injected|attacker@/i.test([...res.headers.keys()].join("\n"))) problems.push("header injection");
  return problems;
}

/** Values for the route's dynamic segments (a catch-all gets a list). */
function paramsFor(pattern: string, id: string): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [, catchAll, name] of pattern.matchAll(/\[(\.\.\.)?(\w+)\]/g)) {
    params[name] = (catchAll ? [id, id] : id) as unknown as string;
  }
  return params;
}

function casesFor(pattern: string, method: string, token: string): Case[] {
  const url = `/api/${pattern}`;
  const base = (extra: CallOptions): CallOptions => ({ method, path: url, params: paramsFor(pattern, "wf_unknownunknownunknown"), ...extra });
  const withToken = (c: Case): Case => ({ ...c, options: { ...c.options, token, headers: { ...c.options.headers } } });
  const bodies = method === "GET" ? [] : BODY_CASES.map(withToken);
  const auth = AUTH_CASES.map((c) => ({ ...c, options: { ...c.options, ...(method === "GET" ? {} : { json: {} }) } }));
  const ids = pattern.includes("[") ? HOSTILE_IDS.map((id) => ({ name: `id ${id.slice(0, 20)}`, options: { token, params: paramsFor(pattern, id) } })) : [];
  const queries = HOSTILE_QUERIES.map((q) => ({ name: `query ${q.slice(0, 40)}`, options: { token, path: `${url}?${q}` } }));
  return [...bodies, ...auth, ...ids, ...queries].map((c) => ({ name: c.name, options: base(c.options) }));
}

let user: Account;

beforeAll(async () => {
  user = await createTestAccount();
});

describe("no 500 and no leaks on hostile input, for every route and method", () => {
  it("finds the route modules", () => {
    expect(routePatterns().length).toBeGreaterThanOrEqual(30);
  });

  for (const pattern of routePatterns()) {
    it(`/api/${pattern}`, async () => {
      const mod: Record<string, unknown> = await import(path.join(API_DIR, pattern, "route.ts"));
      const methods = METHODS.filter((m) => typeof mod[m] === "function");
      expect(methods.length).toBeGreaterThan(0);
      const failures: string[] = [];
      for (const method of methods) {
        for (const c of casesFor(pattern, method, user.token)) {
          // A handler that throws is what Next.js turns into a bare 500.
          const res = await call(mod[method] as Handler, c.options).catch((error: Error) => {
            failures.push(`${method} ${c.name}: threw ${error.name}: ${error.message}`);
            return null;
          });
          if (!res) continue;
          for (const v of violations(res, !FOREIGN_FORMAT.has(pattern))) failures.push(`${method} ${c.name}: ${v} — ${res.text.slice(0, 200)}`);
        }
      }
      expect(failures).toEqual([]);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(Object.prototype).not.toHaveProperty("polluted");
    });
  }
});

// Production mode (a signing key): unsigned hostile requests must be refused before the SDK parses anything.
// (INNGEST_DEV mode is unsigned by design; its one SDK answer with a stack, an unknown function id, is answered 404 by us.)
describe("the Inngest endpoint with a signing key", () => {
  it("answers unsigned hostile bodies with a 4xx instead of throwing", async () => {
    process.env.INNGEST_SIGNING_KEY = "signkey-test-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    resetConfig();
    onTestFinished(() => {
      delete process.env.INNGEST_SIGNING_KEY;
      resetConfig();
    });
    const mod = await import("@/app/api/inngest/route");
    const failures: string[] = [];
    const statuses = new Set<number>();
    for (const c of BODY_CASES) {
      const res = await call(mod.POST as Handler, { ...c.options, method: "POST", path: "/api/inngest?fnId=x&stepId=step" }).catch(
        (error: Error) => {
          failures.push(`${c.name}: threw ${error.name}: ${error.message}`);
          return null;
        },
      );
      if (!res) continue;
      statuses.add(res.status);
      for (const v of violations(res, false)) failures.push(`${c.name}: ${v} — ${res.text.slice(0, 200)}`);
    }
    expect(failures).toEqual([]);
    expect([...statuses].every((s) => s >= 400 && s < 500)).toBe(true);
  });
});

describe("the Inngest endpoint in dev mode (INNGEST_DEV)", () => {
  it("answers an unknown function id with a 404 problem, not the SDK's 500 with a stack", async () => {
    process.env.INNGEST_DEV = "1";
    resetConfig();
    onTestFinished(() => {
      delete process.env.INNGEST_DEV;
      resetConfig();
    });
    const mod = await import("@/app/api/inngest/route");
    const res = await call(mod.POST as Handler, { method: "POST", path: "/api/inngest?fnId=nope&stepId=step", json: { event: {}, events: [], steps: {}, ctx: {} } });
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect(res.text).not.toContain("    at ");
  });
});
