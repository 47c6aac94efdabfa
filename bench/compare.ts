/**
 * Issue 18's figures in one table: `npm run bench:compare` (a few minutes; run it on a quiet machine).
 *
 * Builds the production server once (into NEXT_DIST_DIR, default `.next-compare`; tsconfig.json, which `next build`
 * rewrites for a custom dist dir, is put back afterwards), then runs each benchmark as its own process on the
 * embedded PGlite and — when DATABASE_URL is set or a PostgreSQL answers at
 * postgres://postgres:postgres@127.0.0.1:5432/postgres — on PostgreSQL (each benchmark makes and drops a fresh
 * database there), reads the `BENCH_JSON {…}` line each prints, and prints figure / target / PostgreSQL / PGlite.
 *   --only freeze,tiny-runs,run-pipeline,enqueue-cost   a subset     --skip-build   reuse the build
 *   --rows 100000 (freeze)   --runs 2000 (tiny-runs)
 */
import { execFileSync, spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { startScriptNodeFlags } from "./server-support";

const { values: args } = parseArgs({
  options: {
    only: { type: "string", default: "freeze,tiny-runs,run-pipeline,enqueue-cost" },
    "skip-build": { type: "boolean", default: false },
    rows: { type: "string", default: "100000" },
    runs: { type: "string", default: "2000" },
  },
});
const DIST = process.env.NEXT_DIST_DIR ?? ".next-compare";
const AUTH_SECRET = process.env.AUTH_SECRET ?? "bench-secret-bench-secret-bench-secret-0123";
const LOCAL_POSTGRES = "postgres://postgres:postgres@127.0.0.1:5432/postgres";
const load = () => os.loadavg().map((l) => l.toFixed(2)).join(" ");
type Json = Record<string, unknown>;

async function postgresUrl(): Promise<string | undefined> {
  const url = process.env.DATABASE_URL ?? LOCAL_POSTGRES;
  const client = postgres(url, { max: 1, connect_timeout: 2, onnotice: () => {} });
  try {
    await client`select 1`;
    return url;
  } catch {
    return undefined;
  } finally {
    await client.end({ timeout: 1 }).catch(() => {});
  }
}

function build() {
  const tsconfig = readFileSync("tsconfig.json", "utf8");
  console.log(`building the production server into ${DIST} …`);
  try {
    execFileSync(process.execPath, ["node_modules/next/dist/bin/next", "build"], { env: { ...process.env, NEXT_DIST_DIR: DIST, AUTH_SECRET }, stdio: "ignore" });
  } finally {
    writeFileSync("tsconfig.json", tsconfig);
  }
}

/** Runs `bench/<name>.ts` in its own process; echoes its summary lines; answers its BENCH_JSON object. */
function bench(name: string, databaseUrl: string | undefined, extra: string[]): Promise<Json | undefined> {
  const env: NodeJS.ProcessEnv = { ...process.env, NEXT_DIST_DIR: DIST, AUTH_SECRET, LOG_LEVEL: "error" };
  delete env.DATABASE_URL;
  if (databaseUrl) env.DATABASE_URL = databaseUrl;
  // run-pipeline executes the product in this child (its peak RSS is the product's): with `npm start`'s Node flags.
  // The others drive a server that bench/server-support starts with them.
  const flags = name === "run-pipeline" ? startScriptNodeFlags() : [];
  const child = spawn(process.execPath, [...flags, "node_modules/tsx/dist/cli.mjs", "--conditions=react-server", "--tsconfig", "tsconfig.json", `bench/${name}.ts`, ...extra], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.setEncoding("utf8").on("data", (c: string) => (out += c));
  child.stderr.setEncoding("utf8").on("data", (c: string) => (err += c));
  return new Promise((resolve) => {
    child.on("exit", (code) => {
      const lines = out.split("\n");
      for (const line of lines) if (line.startsWith(`${name}:`) || line.startsWith("  ")) console.log(`    ${line.trim()}`);
      const json = lines.find((l) => l.startsWith("BENCH_JSON "));
      if (code !== 0) console.log(`    ${name} exited with ${code}${err ? `: ${err.trim().split("\n").slice(-3).join(" | ")}` : ""}`);
      resolve(json ? (JSON.parse(json.slice("BENCH_JSON ".length)) as Json) : undefined);
    });
  });
}

type Row = { figure: string; target: { postgres: string; pglite: string }; value: (r: Json | undefined) => string; met?: (r: Json, driver: string) => boolean };
const fixed = (digits: number) => (x: unknown) => (typeof x === "number" && Number.isFinite(x) ? x.toFixed(digits) : "—");

const ROWS: Record<string, Row[]> = {
  freeze: ["POST run", "GET run", "GET health"].map((endpoint) => ({
    figure: `freeze: ${endpoint} p99 / max during a ${Number(args.rows).toLocaleString("en")}-row run (ms)`,
    target: { postgres: "≤ 100 / ≤ 250", pglite: "≤ 100 / ≤ 250" },
    value: (r) => {
      const s = (r?.stats as Record<string, { p99: number; max: number }> | undefined)?.[endpoint];
      return s ? `${Math.round(s.p99)} / ${Math.round(s.max)}` : "—";
    },
    met: (r) => {
      const s = (r.stats as Record<string, { p99: number; max: number }>)[endpoint];
      return s.p99 <= 100 && s.max <= 250;
    },
  })),
  "tiny-runs": [
    {
      figure: `tiny runs, enqueue → all SUCCESS (runs/s, ${Number(args.runs).toLocaleString("en")} runs, 32 clients, warm)`,
      target: { postgres: "≥ 400", pglite: "≥ 150" },
      value: (r) => fixed(0)(r?.runsPerSecond),
      met: (r, driver) => (r.runsPerSecond as number) >= (driver === "postgres" ? 400 : 150),
    },
    { figure: "tiny runs: app CPU per run, the database's apart (ms)", target: { postgres: "≤ 2", pglite: "≤ 2" }, value: (r) => fixed(2)(r?.appCpuMsPerRun), met: (r) => (r.appCpuMsPerRun as number) <= 2 },
    {
      figure: "tiny runs: database CPU per run (ms) / transactions per run",
      target: { postgres: "—", pglite: "—" },
      value: (r) =>
        r?.postgresCpuMsPerRun != null ? `${fixed(2)(r.postgresCpuMsPerRun)} / ${fixed(1)(r.transactionsPerRun)}` : r?.pgliteThreadCpuMsPerRun != null ? `${fixed(2)(r.pgliteThreadCpuMsPerRun)} (its thread)` : "—",
    },
  ],
  "run-pipeline": [
    { figure: "100,000 rows → 40,000 emails (s)", target: { postgres: "≤ 3", pglite: "≤ 6" }, value: (r) => fixed(2)(r?.seconds), met: (r, driver) => (r.seconds as number) <= (driver === "postgres" ? 3 : 6) && r.status === "SUCCESS" },
    { figure: "  time to first email (ms)", target: { postgres: "≤ 1000", pglite: "≤ 1000" }, value: (r) => fixed(0)(r?.firstEmailMs), met: (r) => (r.firstEmailMs as number) <= 1000 },
    { figure: "  peak RSS (MB)", target: { postgres: "≤ 512", pglite: "≤ 600" }, value: (r) => fixed(0)(r?.peakRssMb), met: (r, driver) => (r.peakRssMb as number) <= (driver === "postgres" ? 512 : 600) },
  ],
  "enqueue-cost": [
    { figure: "POST …/run CPU ÷ an empty POST route's", target: { postgres: "≤ 1.15", pglite: "≤ 1.15" }, value: (r) => fixed(2)(r?.ratio), met: (r) => (r.ratio as number) <= 1.15 },
  ],
};

async function main() {
  const names = args.only!.split(",").map((s) => s.trim()).filter(Boolean);
  for (const name of names) if (!ROWS[name]) throw new Error(`unknown benchmark ${name}: one of ${Object.keys(ROWS).join(", ")}`);
  const pg = await postgresUrl();
  const loadBefore = load();
  if (!args["skip-build"] && names.some((n) => n !== "enqueue-cost" && n !== "run-pipeline")) build();
  const results: Record<string, { postgres?: Json; pglite?: Json }> = {};
  for (const name of names) {
    const extra = name === "freeze" ? ["--rows", args.rows!] : name === "tiny-runs" ? ["--runs", args.runs!] : [];
    results[name] = {};
    for (const driver of pg ? (["postgres", "pglite"] as const) : (["pglite"] as const)) {
      console.log(`  ${name} on ${driver} (load ${load()}) …`);
      results[name][driver] = await bench(name, driver === "postgres" ? pg : undefined, extra);
    }
  }
  const cell = (row: Row, r: Json | undefined, driver: string) => (!r ? "—" : !row.met ? row.value(r) : `${row.value(r)} ${row.met(r, driver) ? "✓" : "✗"}`);
  const table = [["figure", "target PostgreSQL", "PostgreSQL", "target PGlite", "PGlite"]];
  for (const name of names)
    for (const row of ROWS[name]) table.push([row.figure, row.target.postgres, cell(row, results[name].postgres, "postgres"), row.target.pglite, cell(row, results[name].pglite, "pglite")]);
  const widths = table[0].map((_, i) => Math.max(...table.map((r) => r[i].length)));
  console.log("");
  for (const [i, r] of table.entries()) {
    console.log(r.map((c, j) => c.padEnd(widths[j])).join(" | "));
    if (i === 0) console.log(widths.map((w) => "-".repeat(w)).join("-|-"));
  }
  console.log(`\n${pg ? "" : "PostgreSQL: none answered (set DATABASE_URL); "}load average (1/5/15 min): before ${loadBefore}, after ${load()}; ${os.cpus().length} CPUs, Node ${process.version}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
