/**
 * Every scope against every authenticated route, driven by the scopes the operations declare beside their schemas:
 * a key holding exactly the declared scope gets through authorization (whatever the handler then answers), a key
 * holding any other scope gets 403 insufficient_scope with the RFC 6750 challenge naming the scope, and "person"
 * operations refuse every key. A new route without a declared scope fails here (and in the compiler).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { buildOpenApiDocument } from "@/lib/http/openapi";
import { operationAccess } from "@/lib/http/operation-access";
import { allOperations } from "@/lib/http/operations";
import { apiKeyScopes } from "@/lib/schemas/api-keys";
import { createTestAccount } from "@/test/support/accounts";
import { call } from "@/test/support/http";
import { emailEveryRowGraph, enqueue, insertUpload, insertWorkflow } from "@/test/runs/helpers";
import { authenticatedOperations, concretePath, createKey, handlerOf } from "./helpers";

type Account = Awaited<ReturnType<typeof createTestAccount>>;
let alice: Account;
const keyWith = new Map<string, string>();
let allScopesKey: string;
let values: Record<string, string>;

beforeAll(async () => {
  alice = await createTestAccount();
  const uploadId = await insertUpload(alice.id, ["email"], [["a@example.com"]]);
  const workflowId = await insertWorkflow(alice.id, emailEveryRowGraph(uploadId));
  const run = await enqueue(alice.token, workflowId);
  expect(run.status).toBe(202);
  for (const scope of apiKeyScopes) keyWith.set(scope, (await createKey(alice.token, { scopes: [scope] })).key);
  allScopesKey = (await createKey(alice.token, { scopes: [...apiKeyScopes] })).key;
  values = {
    workflowId,
    runId: run.body.runId,
    nodeId: "src",
    uploadId,
    webhookId: "whk_unknownunknownunknown1",
    hookId: "hook_unknownunknownunknown1",
    tusId: "tus_unknown",
    email: "a@example.com",
    version: "1",
    keyId: "key_unknownunknownunknown1",
    senderId: "snd_unknownunknownunknown1",
    token: "unknown",
  };
});

describe("declared scopes", () => {
  it("every authenticated operation declares a known scope or 'person'; open ones declare none", () => {
    for (const op of allOperations) {
      const name = `${op.method.toUpperCase()} ${op.path}`;
      if (op.auth) expect([...apiKeyScopes, "person"], name).toContain(op.scope);
      else expect(op.scope, name).toBeUndefined();
    }
  });

  it("every operation's own path resolves to its own declaration (literal segments win over parameters)", () => {
    for (const op of allOperations) {
      const { path } = concretePath(op, new Proxy({}, { get: (_t, name) => `x_${String(name)}` }) as Record<string, string>);
      expect(operationAccess(op.method, path), `${op.method} ${op.path}`).toBe(op);
    }
    expect(operationAccess("GET", "/api/not-documented")).toBeNull();
  });

  it("shows each operation's scope in the OpenAPI document, with both bearer forms declared", () => {
    const doc = buildOpenApiDocument(allOperations, { version: "test", serverUrl: "http://localhost" });
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(["apiKey", "bearer"]);
    for (const op of allOperations) {
      const documented = doc.paths[op.path.replace(/:([A-Za-z_]+)/g, "{$1}")][op.method] as Record<string, unknown>;
      const name = `${op.method} ${op.path}`;
      if (!op.auth) expect(documented.security, name).toEqual([]);
      else if (op.scope === "person") expect(documented, name).toMatchObject({ security: [{ bearer: [] }], "x-person-only": true });
      else {
        expect(documented, name).toMatchObject({ security: [{ bearer: [] }, { apiKey: [op.scope] }], "x-required-scope": op.scope });
        expect((documented.responses as Record<string, { description: string }>)["403"].description, name).toContain("insufficient_scope");
      }
    }
  });

  it("keeps the account, its keys, the AI provider, Google and changes to senders to people", () => {
    const personOnly = allOperations.filter((op) => op.auth && op.scope === "person").map((op) => op.path);
    for (const path of personOnly) expect(path).toMatch(/^\/api\/(account|integrations\/google|senders)(\/|$)/);
    for (const op of allOperations.filter((o) => o.auth && /^\/api\/senders(\/|$)/.test(o.path))) {
      expect(op.scope, `${op.method} ${op.path}`).toBe(op.method === "get" ? "senders:read" : "person");
    }
    for (const op of allOperations.filter((o) => o.auth && /^\/api\/account(\/|$)/.test(o.path))) expect(op.scope, op.path).toBe("person");
  });
});

describe("every scope against every route", () => {
  it("lets the declared scope through and refuses every other with 403 insufficient_scope", async () => {
    const checked: string[] = [];
    for (const op of authenticatedOperations()) {
      const handler = await handlerOf(op);
      const { path, params } = concretePath(op, values);
      const name = `${op.method.toUpperCase()} ${op.path}`;
      for (const scope of apiKeyScopes) {
        const res = await call(handler, { method: op.method.toUpperCase(), path, params, token: keyWith.get(scope)! });
        if (op.scope === scope) {
          expect([401, 403], `${name} with ${scope}: ${res.status} ${res.text}`).not.toContain(res.status);
        } else {
          expect(res.status, `${name} with ${scope}: ${res.text}`).toBe(403);
          expect(res.headers.get("content-type")).toBe("application/problem+json");
          expect(res.body.code).toBe("insufficient_scope");
          const challenge = res.headers.get("www-authenticate");
          if (op.scope === "person") expect(challenge).toMatch(/^Bearer error="insufficient_scope", error_description="/);
          else expect(challenge, name).toBe(`Bearer error="insufficient_scope", scope="${op.scope}"`);
        }
      }
      checked.push(name);
    }
    expect(checked.length).toBe(authenticatedOperations().length);
    expect(checked.length).toBeGreaterThan(40);
  });

  it("refuses a key with every scope on the person-only routes", async () => {
    const personOnly = authenticatedOperations().filter((op) => op.scope === "person");
    expect(personOnly.map((op) => `${op.method} ${op.path}`)).toEqual(expect.arrayContaining(["post /api/account/api-keys", "put /api/account/ai-provider"]));
    for (const op of personOnly) {
      const { path, params } = concretePath(op, values);
      const res = await call(await handlerOf(op), { method: op.method.toUpperCase(), path, params, token: allScopesKey });
      expect(res.status, `${op.method} ${op.path}`).toBe(403);
      expect(res.body.code).toBe("insufficient_scope");
    }
  });
});
