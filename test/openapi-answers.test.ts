/**
 * The served document against the real answers: every GET of the API, called with an API key (person-only ones with
 * the person's token) on an account with a finished run, answers a status the document lists, and a 200's body has
 * exactly the documented fields (none undocumented, every required one present, the documented types).
 */
import { expect, it } from "vitest";
import { buildOpenApiDocument } from "@/lib/http/openapi";
import { allOperations } from "@/lib/http/operations";
import { apiKeyScopes } from "@/lib/schemas/api-keys";
import { createTestAccount } from "@/test/support/accounts";
import { call } from "@/test/support/http";
import { emailEveryRowGraph, fakeResendForRuns, insertUpload, insertWorkflow, runToEnd, startTestExecutor } from "@/test/runs/helpers";
import { concretePath, createKey, handlerOf } from "@/test/api-keys/helpers";

fakeResendForRuns();

/** Appends to `out` every place where `value` disagrees with the JSON Schema `schema`. */
function walk(value: unknown, schema: any, path: string, out: string[], root: any) {
  if (!schema) return;
  if (schema.$ref) schema = root.components.schemas[schema.$ref.split("/").pop()];
  for (const k of ["anyOf", "oneOf"]) if (schema[k]) {
    const variants = schema[k] as any[];
    const matches = variants.map((v) => { const o: string[] = []; walk(value, v, path, o, root); return o; });
    const best = matches.sort((a, b) => a.length - b.length)[0];
    out.push(...best);
    return;
  }
  if (value === null) { if (schema.type && schema.type !== "null" && !(Array.isArray(schema.type) && schema.type.includes("null"))) out.push(`${path}: null not allowed`); return; }
  if (Array.isArray(value)) { value.slice(0, 3).forEach((v, i) => walk(v, schema.items, `${path}[${i}]`, out, root)); return; }
  if (typeof value === "object") {
    const props = schema.properties ?? {};
    if (schema.type === "object" && schema.properties) {
      for (const key of Object.keys(value as object)) if (!(key in props)) out.push(`${path}.${key}: not documented`);
      for (const key of schema.required ?? []) if (!(key in (value as object))) out.push(`${path}.${key}: documented as required, missing`);
    }
    for (const [key, v] of Object.entries(value as object)) if (props[key]) walk(v, props[key], `${path}.${key}`, out, root);
    return;
  }
  const t = typeof value === "number" ? (Number.isInteger(value) ? ["integer", "number"] : ["number"]) : [typeof value];
  if (schema.type && !t.some((x) => (Array.isArray(schema.type) ? schema.type : [schema.type]).includes(x))) out.push(`${path}: ${typeof value} vs ${JSON.stringify(schema.type)}`);
}

it("answers every GET with a documented status and, for 200, exactly the documented shape", async () => {
  const alice = await createTestAccount();
  const executor = startTestExecutor(1);
  const uploadId = await insertUpload(alice.id, ["email"], [["a@example.com"]]);
  const workflowId = await insertWorkflow(alice.id, emailEveryRowGraph(uploadId));
  const run = await runToEnd(executor, alice.token, workflowId);
  const { key } = await createKey(alice.token, { scopes: [...apiKeyScopes] });
  const doc = buildOpenApiDocument(allOperations, { version: "t", serverUrl: "http://x" }) as any;
  const values = { workflowId, runId: run.runId ?? run.body?.runId, uploadId, nodeId: "src", version: "1" };
  const problems: string[] = [];
  let checked = 0;
  for (const op of allOperations.filter((o) => o.method === "get" && o.auth)) {
    const { path, params } = concretePath(op, values);
    const token = op.scope === "person" ? alice.token : key;
    const res = await call(await handlerOf(op), { path, params, token });
    const documented = doc.paths[op.path.replace(/:([A-Za-z_]+)/g, "{$1}")].get.responses[String(res.status)];
    if (!documented) {
      problems.push(`${op.path}: status ${res.status} is not documented`);
      continue;
    }
    const schema = documented.content?.["application/json"]?.schema;
    if (res.status !== 200 || !schema) continue;
    const out: string[] = [];
    walk(res.body, schema, "", out, doc);
    problems.push(...out.map((p) => `${op.path}: ${p}`));
    checked++;
  }
  expect(problems).toEqual([]);
  expect(checked).toBeGreaterThanOrEqual(12);
});
