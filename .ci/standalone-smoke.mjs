// API smoke checks through the standalone server (EXECUTOR=off) and a worker: node .ci/standalone-smoke.mjs <web> <worker> <metrics token>
const [web, worker, metricsToken] = process.argv.slice(2);
const fail = (message) => {
  console.error(`FAILED: ${message}`);
  process.exit(1);
};
const check = (condition, message) => {
  if (!condition) fail(message);
  console.log(`ok - ${message}`);
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitUntil(what, fn, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn().catch(() => undefined);
    if (value) return value;
    if (Date.now() > deadline) fail(`timed out waiting for ${what}`);
    await sleep(250);
  }
}

async function api(method, path, { token, json, body, headers = {} } = {}) {
  const res = await fetch(`${web}${path}`, {
    method,
    headers: { ...(json ? { "content-type": "application/json" } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    body: json ? JSON.stringify(json) : body,
  });
  const text = await res.text();
  let data;
  try {
    data = JSON.parse(text);
  } catch {
    data = text;
  }
  return { status: res.status, data, text };
}

await waitUntil("the web server", async () => (await fetch(`${web}/api/health`)).ok);
await waitUntil("the worker", async () => (await fetch(`${worker}/api/health/ready`)).ok);

const health = await api("GET", "/api/health");
check(health.status === 200 && health.data.status === "ok", "GET /api/health answers 200 ok");
const ready = await api("GET", "/api/health/ready");
check(ready.status === 200 && JSON.stringify(ready.data) === JSON.stringify({ database: "ok", migrations: "current", executor: "off" }), `web readiness: ${ready.text}`);
const workerReady = await (await fetch(`${worker}/api/health/ready`)).json();
check(workerReady.executor === "running" && workerReady.migrations === "current", `worker readiness: ${JSON.stringify(workerReady)}`);

const email = `smoke-${Date.now()}@example.com`;
const password = "Correct-Horse-Battery-Staple-42!";
const registered = await api("POST", "/api/auth/register", { json: { email, password, fullName: "Smoke Test" } });
check(registered.status === 201, `register answers 201 (${registered.status})`);
const otp = await waitUntil("the sign-up code in the mailbox", async () => {
  const box = await api("GET", `/api/dev/mailbox?to=${encodeURIComponent(email)}`);
  const text = box.data?.items?.[0]?.text ?? "";
  return /\b(\d{6})\b/.exec(text)?.[1];
});
const verified = await api("POST", "/api/auth/verify-email", { json: { email, otp } });
check(verified.status === 200 && verified.data.accessToken, `verify-email answers 200 with tokens (${verified.status})`);
const login = await api("POST", "/api/auth/login", { json: { email, password } });
check(login.status === 200 && login.data.accessToken, `login answers 200 (${login.status})`);
const token = login.data.accessToken;

const form = new FormData();
form.append("file", new Blob(["email,name\nsmoke-recipient@example.com,Ann\n"], { type: "text/csv" }), "people.csv");
const upload = await api("POST", "/api/uploads", { token, body: form });
check(upload.status === 201 && upload.data.uploadId, `upload answers 201 (${upload.status} ${upload.text.slice(0, 200)})`);
const graph = {
  nodes: [
    { id: "t", type: "TRIGGER", data: {} },
    { id: "src", type: "DATA_SOURCE", data: { uploadId: upload.data.uploadId } },
    { id: "out", type: "OUTPUT", data: { forEach: "{{src.rows}}", to: "{{item.email}}", subject: "Hello {{item.name}}", body: "Sent by the standalone check" } },
  ],
  edges: [
    { source: "t", target: "src" },
    { source: "src", target: "out" },
  ],
};
const workflow = await api("POST", "/api/workflows", { token, json: { name: "Standalone smoke", graph } });
check(workflow.status === 201 && workflow.data.id, `create workflow answers 201 (${workflow.status} ${workflow.text.slice(0, 200)})`);
const run = await api("POST", `/api/workflows/${workflow.data.id}/run`, { token, headers: { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" } });
check(run.status === 202 && run.data.runId, `run answers 202 (${run.status})`);
const finished = await waitUntil("the run to finish (executed by the worker)", async () => {
  const view = await api("GET", `/api/workflows/runs/${run.data.runId}`, { token });
  return ["SUCCESS", "FAILED"].includes(view.data.status) ? view.data : undefined;
});
check(finished.status === "SUCCESS", `the run ends SUCCESS (${finished.status} ${finished.error ?? ""})`);
const delivered = await api("GET", "/api/dev/mailbox?to=smoke-recipient%40example.com");
check(delivered.data.items?.length === 1 && delivered.data.items[0].subject === "Hello Ann", "the run's email is in the mailbox");

const noToken = await fetch(`${web}/api/metrics`);
check(noToken.status === 401, `GET /api/metrics without the token answers 401 (${noToken.status})`);
const webMetrics = await (await fetch(`${web}/api/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } })).text();
check(/^flowmail_http_requests_total\{route="\/api\/workflows\/\[workflowId\]\/run",method="POST",status="202"\} 1$/m.test(webMetrics), "web metrics count the run request by its route pattern");
check(/^flowmail_runs_pending 0$/m.test(webMetrics), "web metrics read the queue from the database");
const workerMetrics = await (await fetch(`${worker}/api/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } })).text();
check(/^flowmail_runs_finished_total\{status="SUCCESS",trigger="manual"\} 1$/m.test(workerMetrics), "worker metrics count the finished run");
check(/^flowmail_emails_total\{transport="mailbox",status="sent"\} \d+$/m.test(workerMetrics), "worker metrics count the emails");
console.log("standalone smoke checks passed");
