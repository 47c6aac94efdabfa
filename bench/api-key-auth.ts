/**
 * What authenticating with an API key costs against a person's access token (JWT), paired: the same route handlers,
 * the same account, the same workflow, in interleaved rounds (key / JWT, then JWT / key: the machine's speed drifts
 * within seconds, so both must share the same minutes). Two routes:
 * - GET /api/workflows/:workflowId — the general path: the route wrapper's authentication (the JWT's signature check
 *   and account lookup, against the key's one indexed lookup by its HMAC joined to the account), scope check included;
 * - POST /api/workflows/:workflowId/run, bodiless — the enqueue hot path: one statement checks the account (for a key:
 *   that it is neither revoked nor expired) while it counts the rate-limit hit and inserts the run; the key's fixed
 *   facts (account, scopes, workflows) are remembered by this process after its first use.
 * Neither caches anything that could let a revoked key through: the tests show a revoked key failing on the very next
 * request, on another instance too (test/api-keys, test/faults/api-key-two-instances.test.ts).
 *
 * The figure is this process's CPU time per request (every thread: the handlers, the driver and, on PGlite, the
 * database itself), and requests per second, each route's key ÷ JWT ratio over all rounds (the target: ≤ 1.1).
 * The handlers are called in-process as Next.js calls them (a web Request in, a Response out), without HTTP, so the
 * figures isolate the authentication's share. Prints the load average beside the figures; last line `BENCH_JSON {…}`.
 *
 *   npx tsx --conditions=react-server bench/api-key-auth.ts [--seconds 1.5] [--rounds 8] [--connections 16]
 *     (DATABASE_URL=postgres://… : a fresh database on that server, dropped at the end; unset: PGlite in a temp dir)
 */
import os from "node:os";
import { parseArgs } from "node:util";
import { benchAccount, benchDb, benchEnv, benchExit, benchUpload, benchWorkflow } from "./bench-support";

const { values: args } = parseArgs({
  options: {
    seconds: { type: "string", default: "1.5" },
    rounds: { type: "string", default: "8" },
    connections: { type: "string", default: "16" },
  },
});
const SECONDS = Number(args.seconds);
const ROUNDS = Number(args.rounds);
const CONNECTIONS = Number(args.connections);

type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;
type Phase = { route: "get" | "enqueue"; auth: "jwt" | "key" };
type Tally = { requests: number; cpuUs: number; wallMs: number };

async function main() {
  benchEnv({ RUN_RATE_LIMIT_PER_MINUTE: "100000000", EXECUTOR: "off" });
  const { driver } = await benchDb();
  const { signAccessToken } = await import("@/lib/auth/tokens");
  const { createApiKey } = await import("@/lib/services/api-keys/create-api-key");
  const getWorkflow = (await import("@/app/api/workflows/[workflowId]/route")).GET as Handler;
  const enqueue = (await import("@/app/api/workflows/[workflowId]/run/route")).POST as Handler;

  const accountId = await benchAccount();
  const uploadId = await benchUpload(accountId, ["email"], 1, () => ["a@example.com"]);
  const workflowId = await benchWorkflow(accountId, {
    nodes: [
      { id: "t", type: "TRIGGER", data: {} },
      { id: "src", type: "DATA_SOURCE", data: { uploadId } },
      { id: "out", type: "OUTPUT", data: { forEach: "{{src.rows}}", to: "{{item.email}}", subject: "s", body: "b" } },
    ],
    edges: [{ source: "t", target: "src" }, { source: "src", target: "out" }],
  });
  const jwt = await signAccessToken(accountId);
  const { key } = await createApiKey(accountId, { name: "bench", scopes: ["workflows:read", "runs:write"] });
  const credentials = { jwt, key };

  async function one(phase: Phase): Promise<void> {
    const headers = { authorization: `Bearer ${credentials[phase.auth]}` };
    const params = Promise.resolve({ workflowId });
    const res =
      phase.route === "get"
        ? await getWorkflow(new Request(`http://localhost/api/workflows/${workflowId}`, { headers }), { params })
        : await enqueue(new Request(`http://localhost/api/workflows/${workflowId}/run`, { method: "POST", headers }), { params });
    await res.arrayBuffer();
    const expected = phase.route === "get" ? 200 : 202;
    if (res.status !== expected) throw new Error(`${phase.route} with ${phase.auth}: ${res.status}`);
  }

  async function drive(phase: Phase, seconds: number): Promise<Tally> {
    const cpu = process.cpuUsage();
    const start = performance.now();
    const end = start + seconds * 1000;
    let requests = 0;
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (performance.now() < end) {
          await one(phase);
          requests++;
        }
      }),
    );
    const used = process.cpuUsage(cpu);
    return { requests, cpuUs: used.user + used.system, wallMs: performance.now() - start };
  }

  const phases: Phase[] = [
    { route: "get", auth: "key" },
    { route: "get", auth: "jwt" },
    { route: "enqueue", auth: "key" },
    { route: "enqueue", auth: "jwt" },
  ];
  for (const phase of phases) await drive(phase, 1); // warm-up: JIT, connections, the key's remembered facts
  const totals = new Map<string, Tally>(phases.map((p) => [`${p.route}/${p.auth}`, { requests: 0, cpuUs: 0, wallMs: 0 }]));
  const loads: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const route of ["get", "enqueue"] as const) {
      const order: Phase["auth"][] = round % 2 === 0 ? ["key", "jwt"] : ["jwt", "key"];
      for (const auth of order) {
        const tally = await drive({ route, auth }, SECONDS);
        const total = totals.get(`${route}/${auth}`)!;
        total.requests += tally.requests;
        total.cpuUs += tally.cpuUs;
        total.wallMs += tally.wallMs;
      }
    }
    loads.push(os.loadavg()[0]);
  }

  const figures: Record<string, unknown> = { driver, rounds: ROUNDS, seconds: SECONDS, connections: CONNECTIONS };
  for (const route of ["get", "enqueue"] as const) {
    const k = totals.get(`${route}/key`)!;
    const j = totals.get(`${route}/jwt`)!;
    const cpuPerKey = k.cpuUs / k.requests;
    const cpuPerJwt = j.cpuUs / j.requests;
    const rateKey = (k.requests / k.wallMs) * 1000;
    const rateJwt = (j.requests / j.wallMs) * 1000;
    figures[route] = {
      cpuUsPerRequest: { key: Math.round(cpuPerKey), jwt: Math.round(cpuPerJwt), ratio: round2(cpuPerKey / cpuPerJwt) },
      requestsPerSecond: { key: Math.round(rateKey), jwt: Math.round(rateJwt), ratio: round2(rateJwt / rateKey) },
    };
    console.log(
      `${route === "get" ? "GET  /api/workflows/:id    " : "POST /api/workflows/:id/run"} (${driver}): CPU per request key ${Math.round(cpuPerKey)} µs / JWT ${Math.round(cpuPerJwt)} µs = ${round2(cpuPerKey / cpuPerJwt)}×; ` +
        `requests/s key ${Math.round(rateKey)} / JWT ${Math.round(rateJwt)} (cost ratio ${round2(rateJwt / rateKey)}×)`,
    );
  }
  figures.load = { min: round2(Math.min(...loads)), max: round2(Math.max(...loads)) };
  console.log(`load average (1 min) during the rounds: ${round2(Math.min(...loads))}–${round2(Math.max(...loads))} on ${os.availableParallelism()} cores`);
  console.log(`BENCH_JSON ${JSON.stringify(figures)}`);
}

const round2 = (n: number) => Math.round(n * 100) / 100;

main().then(
  () => benchExit(0),
  async (error: unknown) => {
    console.error(error);
    await benchExit(1);
  },
);
