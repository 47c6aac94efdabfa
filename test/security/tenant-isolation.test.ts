import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as uploadsRoute from "@/app/api/uploads/route";
import * as uploadRoute from "@/app/api/uploads/[uploadId]/route";
import * as uploadRowsRoute from "@/app/api/uploads/[uploadId]/rows/route";
import * as webhooksRoute from "@/app/api/webhooks/route";
import * as webhookRoute from "@/app/api/webhooks/[webhookId]/route";
import * as deliveriesRoute from "@/app/api/webhooks/[webhookId]/deliveries/route";
import * as workflowsRoute from "@/app/api/workflows/route";
import * as workflowRoute from "@/app/api/workflows/[workflowId]/route";
import * as enqueueRoute from "@/app/api/workflows/[workflowId]/run/route";
import * as runsRoute from "@/app/api/workflows/[workflowId]/runs/route";
import * as versionsRoute from "@/app/api/workflows/[workflowId]/versions/route";
import * as versionRoute from "@/app/api/workflows/[workflowId]/versions/[version]/route";
import * as duplicateRoute from "@/app/api/workflows/[workflowId]/duplicate/route";
import * as runRoute from "@/app/api/workflows/runs/[runId]/route";
import * as hooksRoute from "@/app/api/workflows/[workflowId]/hooks/route";
import * as tusRoute from "@/app/api/uploads/tus/route";
import * as tusItemRoute from "@/app/api/uploads/tus/[tusId]/route";
import * as hookRoute from "@/app/api/workflows/[workflowId]/hooks/[hookId]/route";
import * as hookDeliveryRoute from "@/app/api/hooks/[token]/route";
import * as nodeOutputRoute from "@/app/api/workflows/runs/[runId]/nodes/[nodeId]/output/route";
import * as accountRunsRoute from "@/app/api/runs/route";
import * as retryRoute from "@/app/api/workflows/runs/[runId]/retry/route";
import * as cancelRoute from "@/app/api/workflows/runs/[runId]/cancel/route";
import * as runEmailsRoute from "@/app/api/workflows/runs/[runId]/nodes/[nodeId]/emails/route";
import * as sendPreviewRoute from "@/app/api/workflows/runs/[runId]/send/route";
import * as suppressionRoute from "@/app/api/suppressions/[email]/route";
import * as suppressionsRoute from "@/app/api/suppressions/route";
import * as apiKeysRoute from "@/app/api/account/api-keys/route";
import * as apiKeyRoute from "@/app/api/account/api-keys/[keyId]/route";
import * as sendersRoute from "@/app/api/senders/route";
import * as senderRoute from "@/app/api/senders/[senderId]/route";
import * as senderTestRoute from "@/app/api/senders/[senderId]/test/route";
import * as aiItemsRoute from "@/app/api/workflows/runs/[runId]/nodes/[nodeId]/items/route";
import * as resendUnknownRoute from "@/app/api/workflows/runs/[runId]/resend-unknown/route";
import { createTestAccount } from "@/test/support/accounts";
import { call, type CallOptions, type CallResult } from "@/test/support/http";
import { filteredEmailGraph, startTestExecutor, stopTestExecutor } from "@/test/runs/helpers";

type Account = Awaited<ReturnType<typeof createTestAccount>>;
type Ids = { workflowId: string; runId: string; uploadId: string; webhookId: string; nodeId: string; hookId: string; tusId: string; keyId: string; senderId: string };
type Handler = Parameters<typeof call>[0];
type Probe = { handler: Handler; options: (ids: Ids) => CallOptions };

const API_DIR = path.join(process.cwd(), "app/api");

/** Every route file under app/api, as its URL pattern ("workflows/[workflowId]/run"). */
function routePatterns(dir = API_DIR): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) return routePatterns(full);
    return entry === "route.ts" ? [path.relative(API_DIR, dir).split(path.sep).join("/")] : [];
  });
}

// NextAuth's catch-all segment names an auth action (signin, callback/…), not a stored object: nothing to isolate.
// An unsubscribe token is its own authority (signed, binds account and address; any other string answers 400).
// Not an account's object behind a bearer token: the unsubscribe token and the SNS signature are the credentials there.
const NOT_OBJECT_IDS = new Set(["nextauth/[...nextauth]", "unsubscribe/[token]", "integrations/ses/events/[senderId]"]);

/** Key "<METHOD> <pattern>" → how account B calls it with A's ids. */
const PROBES: Record<string, Probe> = {
  "DELETE account/api-keys/[keyId]": {
    handler: apiKeyRoute.DELETE,
    options: (ids) => ({ method: "DELETE", path: `/api/account/api-keys/${ids.keyId}`, params: { keyId: ids.keyId } }),
  },
  "PATCH senders/[senderId]": {
    handler: senderRoute.PATCH,
    options: (ids) => ({ method: "PATCH", path: `/api/senders/${ids.senderId}`, params: { senderId: ids.senderId }, json: { name: "stolen" } }),
  },
  "DELETE senders/[senderId]": {
    handler: senderRoute.DELETE,
    options: (ids) => ({ method: "DELETE", path: `/api/senders/${ids.senderId}`, params: { senderId: ids.senderId } }),
  },
  "POST senders/[senderId]/test": {
    handler: senderTestRoute.POST,
    options: (ids) => ({ method: "POST", path: `/api/senders/${ids.senderId}/test`, params: { senderId: ids.senderId } }),
  },
  "GET workflows/runs/[runId]/nodes/[nodeId]/items": {
    handler: aiItemsRoute.GET,
    options: (ids) => ({ path: `/api/workflows/runs/${ids.runId}/nodes/${ids.nodeId}/items`, params: { runId: ids.runId, nodeId: ids.nodeId } }),
  },
  "POST workflows/runs/[runId]/resend-unknown": {
    handler: resendUnknownRoute.POST,
    options: (ids) => ({ method: "POST", path: `/api/workflows/runs/${ids.runId}/resend-unknown`, params: { runId: ids.runId } }),
  },
  "POST workflows/[workflowId]/hooks": {
    handler: hooksRoute.POST,
    options: (ids) => ({ method: "POST", path: `/api/workflows/${ids.workflowId}/hooks`, params: { workflowId: ids.workflowId } }),
  },
  "GET workflows/[workflowId]/hooks": {
    handler: hooksRoute.GET,
    options: (ids) => ({ path: `/api/workflows/${ids.workflowId}/hooks`, params: { workflowId: ids.workflowId } }),
  },
  "DELETE workflows/[workflowId]/hooks/[hookId]": {
    handler: hookRoute.DELETE,
    options: (ids) => ({
      method: "DELETE",
      path: `/api/workflows/${ids.workflowId}/hooks/${ids.hookId}`,
      params: { workflowId: ids.workflowId, hookId: ids.hookId },
    }),
  },
  // The hook URL's token is its only credential: knowing A's hook id (not its token) must start nothing.
  "POST hooks/[token]": {
    handler: hookDeliveryRoute.POST,
    options: (ids) => ({ method: "POST", path: `/api/hooks/${ids.hookId}`, params: { token: ids.hookId }, json: { people: [] } }),
  },
  "GET workflows/[workflowId]": {
    handler: workflowRoute.GET,
    options: (ids) => ({ path: `/api/workflows/${ids.workflowId}`, params: { workflowId: ids.workflowId } }),
  },
  "PATCH workflows/[workflowId]": {
    handler: workflowRoute.PATCH,
    options: (ids) => ({ method: "PATCH", path: `/api/workflows/${ids.workflowId}`, params: { workflowId: ids.workflowId }, json: { name: "stolen" } }),
  },
  "DELETE workflows/[workflowId]": {
    handler: workflowRoute.DELETE,
    options: (ids) => ({ method: "DELETE", path: `/api/workflows/${ids.workflowId}`, params: { workflowId: ids.workflowId } }),
  },
  "POST workflows/[workflowId]/run": {
    handler: enqueueRoute.POST,
    options: (ids) => ({ method: "POST", path: `/api/workflows/${ids.workflowId}/run`, params: { workflowId: ids.workflowId } }),
  },
  "GET workflows/[workflowId]/runs": {
    handler: runsRoute.GET,
    options: (ids) => ({ path: `/api/workflows/${ids.workflowId}/runs`, params: { workflowId: ids.workflowId } }),
  },
  "GET workflows/[workflowId]/versions": {
    handler: versionsRoute.GET,
    options: (ids) => ({ path: `/api/workflows/${ids.workflowId}/versions`, params: { workflowId: ids.workflowId } }),
  },
  "GET workflows/[workflowId]/versions/[version]": {
    handler: versionRoute.GET,
    options: (ids) => ({ path: `/api/workflows/${ids.workflowId}/versions/1`, params: { workflowId: ids.workflowId, version: "1" } }),
  },
  "POST workflows/[workflowId]/duplicate": {
    handler: duplicateRoute.POST,
    options: (ids) => ({ method: "POST", path: `/api/workflows/${ids.workflowId}/duplicate`, params: { workflowId: ids.workflowId } }),
  },
  "GET workflows/runs/[runId]": {
    handler: runRoute.GET,
    options: (ids) => ({ path: `/api/workflows/runs/${ids.runId}`, params: { runId: ids.runId } }),
  },
  "POST workflows/runs/[runId]/retry": {
    handler: retryRoute.POST,
    options: (ids) => ({ method: "POST", path: `/api/workflows/runs/${ids.runId}/retry`, params: { runId: ids.runId } }),
  },
  "POST workflows/runs/[runId]/cancel": {
    handler: cancelRoute.POST,
    options: (ids) => ({ method: "POST", path: `/api/workflows/runs/${ids.runId}/cancel`, params: { runId: ids.runId } }),
  },
  "GET workflows/runs/[runId]/nodes/[nodeId]/output": {
    handler: nodeOutputRoute.GET,
    options: (ids) => ({
      path: `/api/workflows/runs/${ids.runId}/nodes/${ids.nodeId}/output?field=rows`,
      params: { runId: ids.runId, nodeId: ids.nodeId },
    }),
  },
  "GET workflows/runs/[runId]/nodes/[nodeId]/emails": {
    handler: runEmailsRoute.GET,
    options: (ids) => ({ path: `/api/workflows/runs/${ids.runId}/nodes/out/emails`, params: { runId: ids.runId, nodeId: "out" } }),
  },
  "POST workflows/runs/[runId]/send": {
    handler: sendPreviewRoute.POST,
    options: (ids) => ({ method: "POST", path: `/api/workflows/runs/${ids.runId}/send`, params: { runId: ids.runId } }),
  },
  "DELETE suppressions/[email]": {
    handler: suppressionRoute.DELETE,
    options: () => ({ method: "DELETE", path: "/api/suppressions/ada%40example.com", params: { email: "ada@example.com" } }),
  },
  "GET uploads/[uploadId]": {
    handler: uploadRoute.GET,
    options: (ids) => ({ path: `/api/uploads/${ids.uploadId}`, params: { uploadId: ids.uploadId } }),
  },
  "DELETE uploads/[uploadId]": {
    handler: uploadRoute.DELETE,
    options: (ids) => ({ method: "DELETE", path: `/api/uploads/${ids.uploadId}`, params: { uploadId: ids.uploadId } }),
  },
  "GET uploads/[uploadId]/rows": {
    handler: uploadRowsRoute.GET,
    options: (ids) => ({ path: `/api/uploads/${ids.uploadId}/rows`, params: { uploadId: ids.uploadId } }),
  },
  "PATCH uploads/tus/[tusId]": {
    handler: tusItemRoute.PATCH,
    options: (ids) => ({
      method: "PATCH",
      path: `/api/uploads/tus/${ids.tusId}`,
      params: { tusId: ids.tusId },
      headers: { "tus-resumable": "1.0.0", "upload-offset": "0", "content-type": "application/offset+octet-stream" },
      body: "name,e",
    }),
  },
  "DELETE uploads/tus/[tusId]": {
    handler: tusItemRoute.DELETE,
    options: (ids) => ({ method: "DELETE", path: `/api/uploads/tus/${ids.tusId}`, params: { tusId: ids.tusId }, headers: { "tus-resumable": "1.0.0" } }),
  },
  "DELETE webhooks/[webhookId]": {
    handler: webhookRoute.DELETE,
    options: (ids) => ({ method: "DELETE", path: `/api/webhooks/${ids.webhookId}`, params: { webhookId: ids.webhookId } }),
  },
  "GET webhooks/[webhookId]/deliveries": {
    handler: deliveriesRoute.GET,
    options: (ids) => ({ path: `/api/webhooks/${ids.webhookId}/deliveries`, params: { webhookId: ids.webhookId } }),
  },
};

const HTTP_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"];

let alice: Account;
let bob: Account;
let ids: Ids;

async function must<T>(res: Promise<CallResult<T>>, status: number): Promise<CallResult<T>> {
  const done = await res;
  expect(done.status, done.text).toBe(status);
  return done;
}

/** A's upload, workflow, finished run (with node results) and webhook, all through the real endpoints. */
async function createEverything(owner: Account): Promise<Ids> {
  const form = new FormData();
  form.append("file", new File(["name,email,rating\nAda,ada@example.com,5\nBob,bob@example.com,2\n"], "people.csv", { type: "text/csv" }));
  const upload = await must(call(uploadsRoute.POST, { body: form, token: owner.token }), 201);
  const uploadId = upload.body.uploadId;
  const graph = filteredEmailGraph(uploadId, "rating >= 4", { subject: "Hi {{item.name}}", body: "Hello" });
  const workflow = await must(call(workflowsRoute.POST, { json: { name: "Secret", graph }, token: owner.token }), 201);
  const workflowId = workflow.body.id;
  const executor = startTestExecutor(1);
  const run = await must(call(enqueueRoute.POST, { method: "POST", params: { workflowId }, token: owner.token }), 202);
  await executor.idle();
  const webhook = await must(call(webhooksRoute.POST, { json: { url: "http://127.0.0.1:9/hook", workflowId }, token: owner.token }), 201);
  const hook = await must(call(hooksRoute.POST, { method: "POST", params: { workflowId }, token: owner.token }), 201);
  await must(call(suppressionsRoute.POST, { json: { emails: ["ada@example.com"] }, token: owner.token }), 200);
  const tus = await must(call(tusRoute.POST, { method: "POST", path: "/api/uploads/tus", headers: { "tus-resumable": "1.0.0", "upload-length": "12" }, token: owner.token }), 201);
  const tusId = tus.headers.get("location")!.split("/").pop()!;
  const apiKey = await must(call(apiKeysRoute.POST, { json: { name: "CI", scopes: ["runs:read"] }, token: owner.token }), 201);
  const sender = await must(
    call(sendersRoute.POST, { method: "POST", path: "/api/senders", token: owner.token, json: { kind: "smtp", name: "Secret SMTP", from: "Team <team@example.com>", smtp: { host: "127.0.0.1", port: 2525, secure: false } } }),
    201,
  );
  return { senderId: sender.body.id, keyId: apiKey.body.id, workflowId, uploadId, runId: run.body.runId, webhookId: webhook.body.id, nodeId: "src", hookId: hook.body.id, tusId };
}

/** Everything A can read about its objects; must be identical before and after B's attempts. */
async function snapshot(owner: Account) {
  const read = async (probe: Probe) => {
    const res = await call(probe.handler, { ...probe.options(ids), token: owner.token });
    return { status: res.status, body: res.body };
  };
  return {
    workflow: await read(PROBES["GET workflows/[workflowId]"]),
    runs: await read(PROBES["GET workflows/[workflowId]/runs"]),
    run: await read(PROBES["GET workflows/runs/[runId]"]),
    output: await read(PROBES["GET workflows/runs/[runId]/nodes/[nodeId]/output"]),
    upload: await read(PROBES["GET uploads/[uploadId]"]),
    rows: await read(PROBES["GET uploads/[uploadId]/rows"]),
    deliveries: await read(PROBES["GET webhooks/[webhookId]/deliveries"]),
    hooks: await read(PROBES["GET workflows/[workflowId]/hooks"]),
    tus: await call(tusItemRoute.HEAD, { method: "HEAD", path: `/api/uploads/tus/${ids.tusId}`, params: { tusId: ids.tusId }, headers: { "tus-resumable": "1.0.0" }, token: owner.token }).then((res) => ({ status: res.status, body: res.headers.get("upload-offset") })),
    webhooks: (await call(webhooksRoute.GET, { token: owner.token })).body,
    uploads: (await call(uploadsRoute.GET, { token: owner.token })).body,
    workflows: (await call(workflowsRoute.GET, { token: owner.token })).body,
    suppressions: (await call(suppressionsRoute.GET, { token: owner.token })).body,
    apiKeys: (await call(apiKeysRoute.GET, { token: owner.token })).body,
    senders: (await call(sendersRoute.GET, { token: owner.token })).body,
  };
}

beforeAll(async () => {
  alice = await createTestAccount();
  bob = await createTestAccount();
  ids = await createEverything(alice);
});

afterAll(async () => {
  await stopTestExecutor();
});

describe("tenant isolation", () => {
  it("has an isolation probe for every method of every route with a dynamic segment", async () => {
    const dynamic = routePatterns().filter((p) => p.includes("[") && !NOT_OBJECT_IDS.has(p));
    expect(dynamic.length).toBeGreaterThanOrEqual(8);
    const expected: string[] = [];
    for (const pattern of dynamic) {
      const mod: Record<string, unknown> = await import(path.join(API_DIR, pattern, "route.ts"));
      for (const method of HTTP_METHODS.filter((m) => typeof mod[m] === "function")) expected.push(`${method} ${pattern}`);
    }
    expect(Object.keys(PROBES).sort()).toEqual(expected.sort());
  });

  it("A's objects are all readable by A (so the 404s below are about ownership, not missing data)", async () => {
    const snap = await snapshot(alice);
    for (const [name, res] of Object.entries(snap).filter(([, v]) => "status" in (v as object))) {
      expect((res as { status: number }).status, name).toBe(200);
    }
    expect(snap.run.body.status).toBe("SUCCESS");
  });

  it("answers 404 problem+json to B on every id endpoint, and leaves A's objects unchanged", async () => {
    const before = await snapshot(alice);
    for (const [key, probe] of Object.entries(PROBES)) {
      const res = await call(probe.handler, { ...probe.options(ids), token: bob.token });
      expect(res.status, `${key}: ${res.text}`).toBe(404);
      expect(res.headers.get("content-type"), key).toBe("application/problem+json");
      expect(res.body.code, key).toMatch(/not_found$/);
      // The body must not echo what A's object holds.
      expect(res.text, key).not.toContain("Secret");
    }
    expect(await snapshot(alice)).toEqual(before);
  });

  it("B's lists never show A's objects", async () => {
    for (const handler of [workflowsRoute.GET, uploadsRoute.GET, webhooksRoute.GET, accountRunsRoute.GET, apiKeysRoute.GET, sendersRoute.GET]) {
      const res = await call(handler, { token: bob.token });
      expect(res.status).toBe(200);
      expect(res.body.items).toEqual([]);
    }
  });
});
