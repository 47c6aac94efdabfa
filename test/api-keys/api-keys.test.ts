/**
 * API keys through the real endpoints: create (shown once, stored as an HMAC), list, revoke (fails on the very next
 * request, also on the enqueue hot path whose key facts are remembered in memory), expiry, validation, the cap of 50
 * live keys, keys kept away from the account endpoints, and keys counting against the account's rate limits.
 */
import { eq, sql } from "drizzle-orm";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import * as apiKeysRoute from "@/app/api/account/api-keys/route";
import * as apiKeyRoute from "@/app/api/account/api-keys/[keyId]/route";
import * as accountRoute from "@/app/api/account/route";
import * as workflowsRoute from "@/app/api/workflows/route";
import { getDb } from "@/db/client";
import { apiKeys } from "@/db/schema";
import { resetConfig } from "@/lib/config";
import { MAX_LIVE_API_KEYS } from "@/lib/schemas/api-keys";
import { createTestAccount } from "@/test/support/accounts";
import { call } from "@/test/support/http";
import { emailEveryRowGraph, enqueue, insertUpload, insertWorkflow } from "@/test/runs/helpers";
import { createKey } from "./helpers";

type Account = Awaited<ReturnType<typeof createTestAccount>>;
let alice: Account;
let workflowId: string;

beforeAll(async () => {
  alice = await createTestAccount();
  const uploadId = await insertUpload(alice.id, ["email"], [["a@example.com"]]);
  workflowId = await insertWorkflow(alice.id, emailEveryRowGraph(uploadId));
});

afterEach(() => {
  delete process.env.RUN_RATE_LIMIT_PER_MINUTE;
  resetConfig();
});

const listWorkflows = (token: string) => call(workflowsRoute.GET, { path: "/api/workflows", token });
const revoke = (token: string, keyId: string) =>
  call(apiKeyRoute.DELETE, { method: "DELETE", path: `/api/account/api-keys/${keyId}`, params: { keyId }, token });

async function expectInvalidToken(res: { status: number; body: { code: string }; headers: Headers }) {
  expect(res.status).toBe(401);
  expect(res.body.code).toBe("invalid_token");
  expect(res.headers.get("www-authenticate")).toBe('Bearer error="invalid_token"');
}

describe("creating and listing keys", () => {
  it("shows the key once, fmk_ and 256 bits in base62, and stores only its HMAC", async () => {
    const res = await call(apiKeysRoute.POST, {
      json: { name: "CI deploy", scopes: ["runs:write", "workflows:read", "runs:write"], workflowIds: [workflowId], expiresInDays: 30 },
      token: alice.token,
    });
    expect(res.status, res.text).toBe(201);
    const { key, ...rest } = res.body;
    expect(key).toMatch(/^fmk_[0-9A-Za-z]{43}$/);
    expect(rest).toEqual({
      id: expect.stringMatching(/^key_[A-Za-z0-9_-]{22}$/),
      name: "CI deploy",
      prefix: key.slice(0, 12),
      scopes: ["workflows:read", "runs:write"],
      workflowIds: [workflowId],
      expiresAt: expect.any(String),
      createdAt: expect.any(String),
    });
    const days = (Date.parse(rest.expiresAt) - Date.parse(rest.createdAt)) / 86_400_000;
    expect(Math.round(days)).toBe(30);
    const db = await getDb();
    const [row] = await db.select().from(apiKeys).where(eq(apiKeys.id, rest.id));
    expect(row.keyHash).not.toContain(key.slice(4));
    expect(JSON.stringify(row)).not.toContain(key.slice(12));

    const list = await call(apiKeysRoute.GET, { token: alice.token });
    expect(list.status).toBe(200);
    const listed = list.body.items.find((k: { id: string }) => k.id === rest.id);
    expect(listed).toEqual({ ...rest, lastUsedAt: null });
    expect(list.text).not.toContain(key.slice(12));
  });

  it("authenticates with the key and records its last use", async () => {
    const { id, key } = await createKey(alice.token, { scopes: ["workflows:read"] });
    const res = await listWorkflows(key);
    expect(res.status, res.text).toBe(200);
    expect(res.body.items.map((w: { id: string }) => w.id)).toContain(workflowId);
    await vi.waitFor(async () => {
      const list = await call(apiKeysRoute.GET, { token: alice.token });
      expect(list.body.items.find((k: { id: string }) => k.id === id).lastUsedAt).not.toBeNull();
    });
  });

  it.each([
    [{ name: "x", scopes: ["runs:delete"] }, "scopes[0]"],
    [{ name: "x", scopes: [] }, "scopes"],
    [{ name: "x", scopes: ["runs:read"], expiresInDays: 0 }, "expiresInDays"],
    [{ name: "x", scopes: ["runs:read"], expiresInDays: 366 }, "expiresInDays"],
    [{ name: "x", scopes: ["runs:read"], expiresInDays: 1.5 }, "expiresInDays"],
    [{ name: "", scopes: ["runs:read"] }, "name"],
    [{ name: "x", scopes: ["runs:read"], admin: true }, "admin"],
    [{ name: "x", scopes: ["runs:read"], workflowIds: ["wf_doesnotexistdoesnotexi"] }, "workflowIds[0]"],
  ])("answers 422 naming the field for %j", async (body, path) => {
    const before = (await call(apiKeysRoute.GET, { token: alice.token })).body.items.length;
    const res = await call(apiKeysRoute.POST, { json: body, token: alice.token });
    expect(res.status, res.text).toBe(422);
    expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
    expect((await call(apiKeysRoute.GET, { token: alice.token })).body.items.length).toBe(before);
  });

  it("refuses another account's workflow as an unknown one", async () => {
    const bob = await createTestAccount();
    const res = await call(apiKeysRoute.POST, { json: { name: "x", scopes: ["runs:read"], workflowIds: [workflowId] }, token: bob.token });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([expect.objectContaining({ path: "workflowIds[0]", code: "unknown_workflow" })]);
  });
});

describe("revocation and expiry", () => {
  it("a revoked key fails on the very next request, and revoking again is 404", async () => {
    const { id, key } = await createKey(alice.token, { scopes: ["workflows:read", "runs:write"] });
    expect((await listWorkflows(key)).status).toBe(200);
    expect((await enqueue(key, workflowId)).status).toBe(202);
    expect((await revoke(alice.token, id)).status).toBe(204);
    await expectInvalidToken(await listWorkflows(key));
    await expectInvalidToken(await enqueue(key, workflowId));
    expect((await revoke(alice.token, id)).status).toBe(404);
    const list = await call(apiKeysRoute.GET, { token: alice.token });
    expect(list.body.items.map((k: { id: string }) => k.id)).not.toContain(id);
  });

  it("the enqueue hot path checks revocation in its statement even for a key this instance remembers", async () => {
    const { id, key } = await createKey(alice.token, { scopes: ["runs:write"] });
    expect((await enqueue(key, workflowId)).status).toBe(202);
    expect((await enqueue(key, workflowId)).status).toBe(202);
    // Revoked behind this instance's back (as another instance would).
    const db = await getDb();
    await db.update(apiKeys).set({ revokedAt: new Date() }).where(eq(apiKeys.id, id));
    const res = await enqueue(key, workflowId);
    await expectInvalidToken(res);
    expect(res.body.detail).toMatch(/revoked/);
  });

  it("an expired key answers 401 invalid_token everywhere", async () => {
    const { id, key } = await createKey(alice.token, { scopes: ["workflows:read", "runs:write"], expiresInDays: 1 });
    expect((await enqueue(key, workflowId)).status).toBe(202);
    const db = await getDb();
    await db.update(apiKeys).set({ expiresAt: sql`now() - interval '1 second'` }).where(eq(apiKeys.id, id));
    const res = await listWorkflows(key);
    await expectInvalidToken(res);
    expect(res.body.detail).toMatch(/expired/);
    await expectInvalidToken(await enqueue(key, workflowId));
  });

  it("a malformed or unknown key is 401 invalid_token", async () => {
    await expectInvalidToken(await listWorkflows("fmk_short"));
    await expectInvalidToken(await listWorkflows(`fmk_${"A".repeat(43)}`));
    await expectInvalidToken(await enqueue(`fmk_${"B".repeat(43)}`, workflowId));
  });
});

describe("keys stay out of the account", () => {
  it("cannot read the account, create keys or revoke them (403 insufficient_scope)", async () => {
    const { id, key } = await createKey(alice.token, { scopes: ["workflows:read"] });
    for (const res of [
      await call(accountRoute.GET, { path: "/api/account", token: key }),
      await call(apiKeysRoute.GET, { path: "/api/account/api-keys", token: key }),
      await call(apiKeysRoute.POST, { path: "/api/account/api-keys", json: { name: "x", scopes: ["runs:read"] }, token: key }),
      await revoke(key, id),
    ]) {
      expect(res.status, res.text).toBe(403);
      expect(res.body.code).toBe("insufficient_scope");
    }
    expect((await listWorkflows(key)).status).toBe(200);
  });
});

describe("limits", () => {
  it(`holds at most ${MAX_LIVE_API_KEYS} live keys: 409 past it; revoked and expired keys do not count`, async () => {
    const carol = await createTestAccount();
    const created = await Promise.all(
      Array.from({ length: MAX_LIVE_API_KEYS + 5 }, () =>
        call(apiKeysRoute.POST, { json: { name: "k", scopes: ["runs:read"] }, token: carol.token })),
    );
    expect(created.filter((r) => r.status === 201)).toHaveLength(MAX_LIVE_API_KEYS);
    const refused = created.filter((r) => r.status !== 201);
    expect(refused).toHaveLength(5);
    for (const r of refused) expect(r.body.code).toBe("api_key_limit_reached");
    expect(refused[0].status).toBe(409);

    const [first, second] = created.filter((r) => r.status === 201).map((r) => r.body.id as string);
    expect((await revoke(carol.token, first)).status).toBe(204);
    const db = await getDb();
    await db.update(apiKeys).set({ expiresAt: sql`now() - interval '1 second'` }).where(eq(apiKeys.id, second));
    const more = [
      await call(apiKeysRoute.POST, { json: { name: "k", scopes: ["runs:read"] }, token: carol.token }),
      await call(apiKeysRoute.POST, { json: { name: "k", scopes: ["runs:read"] }, token: carol.token }),
      await call(apiKeysRoute.POST, { json: { name: "k", scopes: ["runs:read"] }, token: carol.token }),
    ];
    expect(more.map((r) => r.status)).toEqual([201, 201, 409]);
  });

  it("counts a key's runs against its account's run rate limit, shared with the person's tokens", async () => {
    process.env.RUN_RATE_LIMIT_PER_MINUTE = "3";
    resetConfig();
    const dave = await createTestAccount();
    const uploadId = await insertUpload(dave.id, ["email"], [["a@example.com"]]);
    const daveWorkflow = await insertWorkflow(dave.id, emailEveryRowGraph(uploadId));
    const { key } = await createKey(dave.token, { scopes: ["runs:write"] });
    expect((await enqueue(dave.token, daveWorkflow)).status).toBe(202);
    expect((await enqueue(key, daveWorkflow)).status).toBe(202);
    const third = await enqueue(key, daveWorkflow, { "Idempotency-Key": "general-path" });
    expect(third.status).toBe(202);
    expect(third.headers.get("ratelimit-remaining")).toBe("0");
    const refused = await enqueue(key, daveWorkflow);
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe("rate_limited");
    expect((await enqueue(dave.token, daveWorkflow)).status).toBe(429);
  });
});
