import { count } from "drizzle-orm";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import * as verifyEmailRoute from "@/app/api/auth/verify-email/route";
import * as registerRoute from "@/app/api/auth/register/route";
import * as mailboxRoute from "@/app/api/dev/mailbox/route";
import * as accountRoute from "@/app/api/account/route";
import * as uploadsRoute from "@/app/api/uploads/route";
import * as webhooksRoute from "@/app/api/webhooks/route";
import * as workflowsRoute from "@/app/api/workflows/route";
import { getDb } from "@/db/client";
import { uploadChunks, uploads, webhooks, workflows, workflowVersions } from "@/db/schema";
import { resetConfig } from "@/lib/config";
import { createTestAccount } from "@/test/support/accounts";
import { call, type CallResult } from "@/test/support/http";

type Account = Awaited<ReturnType<typeof createTestAccount>>;
const MIB = 1024 * 1024;

let alice: Account;
let uploadId: string;

async function counts() {
  const db = await getDb();
  const one = async (table: typeof workflows | typeof workflowVersions | typeof uploads | typeof uploadChunks | typeof webhooks) =>
    (await db.select({ n: count() }).from(table))[0].n;
  return {
    workflows: await one(workflows),
    versions: await one(workflowVersions),
    uploads: await one(uploads),
    chunks: await one(uploadChunks),
    webhooks: await one(webhooks),
  };
}

/** Sends, then checks the contract's problem+json with one of `statuses` and `code`, and that nothing was stored. */
async function expectRefused(send: () => Promise<CallResult>, statuses: number[], code: RegExp): Promise<any> {
  const before = await counts();
  const res = await send();
  expect(statuses, res.text.slice(0, 300)).toContain(res.status);
  expect(res.headers.get("content-type")).toBe("application/problem+json");
  expect(res.body.code).toMatch(code);
  expect(await counts()).toEqual(before);
  return res.body;
}

type Slots = { expr?: string; condition?: string; source?: string; to?: string; subject?: string; body?: string; name?: string };

/** TRIGGER → DATA_SOURCE → FILTER → OUTPUT, with one hostile value put in the named slot. */
function graph(slots: Slots) {
  return {
    nodes: [
      { id: "t", type: "TRIGGER", data: {} },
      { id: "src", type: "DATA_SOURCE", data: { uploadId } },
      { id: "f", type: "FILTER", data: { source: slots.source ?? "{{src.rows}}", expr: slots.expr ?? "rating >= 4" } },
      {
        id: "out",
        type: "OUTPUT",
        data: { forEach: "{{f.items}}", to: slots.to ?? "{{item.email}}", subject: slots.subject ?? "Hi", body: slots.body ?? "Hello {{item.name}}" },
      },
    ],
    edges: [
      { source: "t", target: "src" },
      { source: "src", target: "f", ...(slots.condition ? { condition: slots.condition } : {}) },
      { source: "f", target: "out" },
    ],
  };
}

const createWorkflow = (json: unknown) => call(workflowsRoute.POST, { json, token: alice.token });

beforeAll(async () => {
  alice = await createTestAccount();
  const form = new FormData();
  form.append("file", new File(["name,email,rating\nAda,ada@example.com,5\n"], "people.csv", { type: "text/csv" }));
  const res = await call(uploadsRoute.POST, { body: form, token: alice.token });
  expect(res.status).toBe(201);
  uploadId = res.body.uploadId;
});

describe("expression escapes in FILTER expr and edge conditions", () => {
  const ESCAPES = [
    "this",
    "this.constructor",
    "Function('return process')()",
    "import('fs')",
    "with (process) exit()",
    "globalThis.process",
    "process.exit()",
    "a.constructor",
    "rating.constructor.constructor('return process')()",
    '"".constructor.constructor("return process")()',
    "item.__proto__.polluted",
    "item.constructor",
    "item.prototype",
    "require('child_process')",
    "new Error()",
    "eval('1')",
    "rating >= 4; process.exit()",
    "`${process}`",
    "(() => process)()",
    "lower.constructor",
    "len(item).constructor",
  ];

  it("the baseline graph is accepted (so every refusal below is about the hostile value)", async () => {
    const res = await createWorkflow({ name: "ok", graph: graph({}) });
    expect(res.status, res.text).toBe(201);
  });

  for (const expr of ESCAPES) {
    it(`refuses expr ${expr}`, async () => {
      const problem = await expectRefused(() => createWorkflow({ name: "x", graph: graph({ expr }) }), [422], /^invalid_graph$/);
      expect(problem.errors).toContainEqual(expect.objectContaining({ code: "invalid_expression", nodeId: "f" }));
    });

    it(`refuses edge condition ${expr}`, async () => {
      const problem = await expectRefused(() => createWorkflow({ name: "x", graph: graph({ condition: expr }) }), [422], /^invalid_graph$/);
      expect(problem.errors.map((e: { code: string }) => e.code)).toContain("invalid_expression");
    });
  }
});

describe("template escapes", () => {
  const TEMPLATES = [
    "{{constructor.constructor('return process')()}}",
    "{{__proto__.x}}",
    "{{constructor}}",
    "{{item.__proto__.polluted}}",
    "{{src.__proto__}}",
    "{{this}}",
    "{{globalThis.process}}",
    "{{process.env.AUTH_SECRET}}",
    "{{ src.__proto__.constructor }}x",
    "{{item.email}}{{import('fs')}}",
    "{{ f.items | eval }}",
    "{{#with process}}{{exit}}{{/with}}",
  ];
  const SLOTS = ["subject", "body", "to", "source"] as const;

  for (const template of TEMPLATES) {
    for (const slot of SLOTS) {
      it(`refuses ${slot} ${template}`, async () => {
        const problem = await expectRefused(() => createWorkflow({ name: "x", graph: graph({ [slot]: template }) }), [422], /^invalid_graph$/);
        expect(problem.errors.length).toBeGreaterThan(0);
      });
    }
  }

  it("refuses prototype-pollution keys inside the graph and stores nothing", async () => {
    const body = `{"name":"x","graph":{"nodes":[{"id":"t","type":"TRIGGER","data":{"__proto__":{"polluted":true}}}],"edges":[],"__proto__":{"polluted":true}}}`;
    await expectRefused(
      () => call(workflowsRoute.POST, { body, headers: { "content-type": "application/json" }, token: alice.token }),
      [422],
      /^(invalid_graph|validation_failed)$/,
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("refuses NUL characters in JSON bodies instead of failing in the database", async () => {
    const nameErr = await expectRefused(() => createWorkflow({ name: "a\u0000b", graph: graph({}) }), [422], /^validation_failed$/);
    expect(nameErr.errors).toEqual([expect.objectContaining({ path: "name" })]);
    const graphErr = await expectRefused(() => createWorkflow({ name: "x", graph: graph({ subject: "Hi\u0000there" }) }), [422], /^validation_failed$/);
    expect(graphErr.errors).toEqual([expect.objectContaining({ path: "graph.nodes[3].data.subject" })]);
    const account = await call(accountRoute.PATCH, { method: "PATCH", json: { fullName: "Eve\u0000" }, token: alice.token });
    expect(account.status).toBe(422);
    expect(account.body.code).toBe("validation_failed");
  });
});

describe("CSV bombs", () => {
  const uploadCsv = (content: string | Uint8Array, filename = "bomb.csv") => {
    const form = new FormData();
    form.append("file", new File([content as BlobPart], filename, { type: "text/csv" }));
    return call(uploadsRoute.POST, { body: form, token: alice.token });
  };
  const BOMBS: [string, () => string][] = [
    ["a quoted field spanning 3 MiB", () => `name,email\n"${"x".repeat(3 * MIB)}",a@example.com\n`],
    ["an unterminated quote spanning 3 MiB", () => `name,email\n"${"x,\n".repeat(MIB)}`],
    ["doubled quotes spanning 3 MiB", () => `name,email\n"${'""'.repeat(1.5 * MIB)}",x\n`],
    ["a header of 100k columns", () => `${Array.from({ length: 100_000 }, (_, i) => `c${i}`).join(",")}\n`],
    ["a row of 1M delimiters", () => `name,email\n${",".repeat(MIB)}\n`],
    ["repeated delimiters on every line", () => `name,email\n${`${",".repeat(1000)}\n`.repeat(2000)}`],
    ["only empty lines (no header)", () => "\n".repeat(3 * MIB)],
    ["only delimiters and CRLFs", () => ",;\t\r\n".repeat(MIB / 2)],
    ["a duplicate empty header repeated", () => `${",".repeat(50_000)}\n1\n`],
    ["a NUL and U+FFFD in a cell", () => `name,email\nAda,ada@example.com\n\u0000\uFFFD`],
  ];

  for (const [name, make] of BOMBS) {
    it(`refuses ${name} with 413/422 and stores nothing`, async () => {
      await expectRefused(() => uploadCsv(make()), [413, 422], /^(payload_too_large|invalid_csv)$/);
    });
  }

  it("refuses invalid UTF-8 bytes", async () => {
    const bytes = new Uint8Array([...new TextEncoder().encode("name,email\nAda,"), 0xff, 0xfe, 0xc3, 0x28, 0x0a]);
    await expectRefused(() => uploadCsv(bytes), [422], /^invalid_csv$/);
  });

  it("a header followed by MiBs of empty lines is a valid CSV with no rows (empty lines are skipped, not stored)", async () => {
    const res = await uploadCsv(`name,email\n${"\r\n".repeat(MIB)}`);
    expect(res.status, res.text).toBe(201);
    expect(res.body.rowCount).toBe(0);
  });

  it("refuses an upload over UPLOAD_MAX_BYTES with 413", async () => {
    process.env.UPLOAD_MAX_BYTES = String(MIB);
    resetConfig();
    try {
      await expectRefused(() => uploadCsv(`name,email\n${"a,b@example.com\n".repeat(MIB / 8)}`), [413], /^payload_too_large$/);
    } finally {
      delete process.env.UPLOAD_MAX_BYTES;
      resetConfig();
    }
  });
});

describe("SSRF encodings for webhook URLs (private targets not allowed)", () => {
  const TARGETS = [
    "http://127.1",
    "https://127.1",
    "https://0x7f.1",
    "https://0x7f000001",
    "https://017700000001",
    "https://2130706433",
    "https://[::ffff:127.0.0.1]",
    "https://[::ffff:7f00:1]",
    "https://[::1]",
    "https://[0:0:0:0:0:0:0:1]",
    "https://[fd00::1]",
    "https://169.254.169.254/latest/meta-data/",
    "https://[fe80::1%25eth0]",
    "https://localhost",
    "https://LOCALHOST.",
    "https://a.localhost",
    "https://0.0.0.0",
    "https://10.0.0.1",
    "https://192.168.1.1",
    "https://100.64.0.1",
    "https://user:pass@127.0.0.1",
    "https://127.0.0.1:443@example.com",
    "file:///etc/passwd",
    "gopher://127.0.0.1:6379/_INFO",
    "javascript:alert(1)",
    "https://example.com\r\nHost: 127.0.0.1",
  ];

  afterEach(() => {
    delete process.env.ALLOW_PRIVATE_NETWORK_TARGETS;
    resetConfig();
  });

  for (const url of TARGETS) {
    it(`refuses ${JSON.stringify(url)}`, async () => {
      process.env.ALLOW_PRIVATE_NETWORK_TARGETS = "false";
      resetConfig();
      await expectRefused(() => call(webhooksRoute.POST, { json: { url }, token: alice.token }), [422], /^validation_failed$/);
    });
  }
});

describe("tokens and OTPs from the real register/verify flow", () => {
  const freshEmail = () => `sec-${Math.random().toString(36).slice(2, 10)}@example.com`;

  async function latestCode(to: string): Promise<string> {
    const res = await call(mailboxRoute.GET, { path: `/api/dev/mailbox?to=${encodeURIComponent(to)}` });
    expect(res.status).toBe(200);
    const match = /Your Flowmail code: (\d{6})$/.exec(res.body.items[0]?.subject ?? "");
    expect(match).not.toBeNull();
    return match![1];
  }

  async function register(email: string) {
    const res = await call(registerRoute.POST, { json: { email, password: "correct horse battery", fullName: "Eve" } });
    expect(res.status, res.text).toBe(201);
    return latestCode(email);
  }

  const verify = (email: string, otp: unknown) => call(verifyEmailRoute.POST, { json: { email, otp } });

  it("refuses OTP brute force: 5 wrong tries answer 400, the 6th answers 429 even with the right code", async () => {
    const email = freshEmail();
    const code = await register(email);
    const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, "0");
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await verify(email, wrong)).status);
    expect(statuses).toEqual([400, 400, 400, 400, 400]);
    const blocked = await verify(email, code);
    expect(blocked.status).toBe(429);
    expect(blocked.headers.get("content-type")).toBe("application/problem+json");
    expect(blocked.body.code).toBe("rate_limited");
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it("never verifies look-alike encodings of the right code", async () => {
    const email = freshEmail();
    const code = await register(email);
    const odd = [`${code}\r\nX: 1`, `\u0660${code.slice(1)}`, `${code}0`, { $ne: "" }, [code]];
    const statuses: number[] = [];
    for (const otp of odd) statuses.push((await verify(email, otp)).status);
    expect(statuses.every((s) => s === 400 || s === 422)).toBe(true);
  });

  it("refuses a real refresh token used as an access token", async () => {
    const email = freshEmail();
    const verified = await verify(email, await register(email));
    expect(verified.status, verified.text).toBe(200);
    const { accessToken, refreshToken } = verified.body;
    expect((await call(accountRoute.GET, { token: accessToken })).status).toBe(200);
    const res = await call(accountRoute.GET, { token: refreshToken });
    expect(res.status).toBe(401);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect(res.body.code).toBe("invalid_token");
  });
});
