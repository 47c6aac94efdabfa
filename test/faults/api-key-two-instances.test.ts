/**
 * Two app instances (two processes) on one PostgreSQL database: a key used on instance B — so that B remembers its
 * fixed facts for the enqueue hot path — and revoked through instance A fails on B's very next request, on the
 * general path and on the hot path alike. PostgreSQL only (TEST_DATABASE_URL): PGlite serves one process.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestAccount } from "@/test/support/accounts";
import { emailEveryRowGraph, insertUpload, insertWorkflow } from "@/test/runs/helpers";

const onPostgres = Boolean(process.env.TEST_DATABASE_URL);
const instances: ChildProcess[] = [];

function startInstance(): Promise<string> {
  const child = spawn(process.execPath, ["--conditions=react-server", "--import", "tsx", "test/faults/api-key-instance.ts"], {
    cwd: process.cwd(),
    env: { ...process.env, DATABASE_URL: process.env.TEST_DATABASE_CURRENT_URL!, LOG_LEVEL: "error", EXECUTOR: "off" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  instances.push(child);
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const url = /listening (\S+)/.exec(out)?.[1];
      if (url) resolve(url);
    });
    child.on("exit", (code) => reject(new Error(`instance exited with ${code}`)));
  });
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe.runIf(onPostgres)("API key revocation across two app instances on one PostgreSQL", () => {
  let a: string;
  let b: string;

  beforeAll(async () => {
    [a, b] = await Promise.all([startInstance(), startInstance()]);
  }, 120_000);

  afterAll(() => {
    for (const child of instances) child.kill("SIGTERM");
  });

  it("a key revoked on A fails on B's very next request, general path and hot path", async () => {
    const person = await createTestAccount();
    const uploadId = await insertUpload(person.id, ["email"], [["a@example.com"]]);
    const workflowId = await insertWorkflow(person.id, emailEveryRowGraph(uploadId));
    const created = await fetch(`${a}/api/account/api-keys`, {
      method: "POST",
      headers: { ...bearer(person.token), "content-type": "application/json" },
      body: JSON.stringify({ name: "two instances", scopes: ["workflows:read", "runs:write"] }),
    });
    expect(created.status).toBe(201);
    const { id, key } = (await created.json()) as { id: string; key: string };

    const enqueueOnB = () => fetch(`${b}/api/workflows/${workflowId}/run`, { method: "POST", headers: bearer(key) });
    const listOnB = () => fetch(`${b}/api/workflows`, { headers: bearer(key) });
    for (let i = 0; i < 3; i++) expect((await enqueueOnB()).status).toBe(202);
    expect((await listOnB()).status).toBe(200);

    const revoked = await fetch(`${a}/api/account/api-keys/${id}`, { method: "DELETE", headers: bearer(person.token) });
    expect(revoked.status).toBe(204);

    for (const res of [await enqueueOnB(), await listOnB()]) {
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe('Bearer error="invalid_token"');
      expect(((await res.json()) as { code: string }).code).toBe("invalid_token");
    }
  });
});
