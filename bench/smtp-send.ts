// Sending through an account's own senders:
// 1. 5,000 emails through an SMTP sender at ratePerSecond 500 to a local SMTP server (smtp-server, in a process of its
//    own, as a real server is: its parsing of 5,000 conversations is not Flowmail's work):
//    run status, distinct messages, total time against the 10 s floor the rate sets, most connections open at once.
// 2. Four workflows sharing one SES sender (its rate, 14/s, read from a local fake of SES's GetAccount; the fake
//    throttles calls beyond 14 in any second): every email delivered once, none dropped, time against the floor.
// Usage: npx tsx --conditions=react-server bench/smtp-send.ts   (DATABASE_URL=postgres://… for PostgreSQL)
import os from "node:os";
import { benchAccount, benchDb, benchEnv, benchExit, benchUpload, benchWorkflow } from "./bench-support";
import { startFakeSmtpProcess } from "./fake-provider-process";
import { startFakeSes } from "../test/support/fake-ses";

const SMTP_EMAILS = Number(process.env.BENCH_SMTP_EMAILS ?? 5000);
const SMTP_RATE = 500;
const SES_RATE = 14;
const SES_PER_WORKFLOW = Number(process.env.BENCH_SES_PER_WORKFLOW ?? 35);

const graph = (uploadId: string, senderId: string) => ({
  nodes: [
    { id: "t", type: "TRIGGER", data: {} },
    { id: "src", type: "DATA_SOURCE", data: { uploadId } },
    { id: "out", type: "OUTPUT", data: { forEach: "{{src.rows}}", to: "{{item.email}}", subject: "Hi {{item.name}}", body: "Hello {{item.name}}", senderId } },
  ],
  edges: [
    { source: "t", target: "src" },
    { source: "src", target: "out" },
  ],
});

async function main() {
  const smtp = await startFakeSmtpProcess();
  const ses = await startFakeSes({ maxSendRate: SES_RATE, max24HourSend: 1_000_000 });
  benchEnv({ EMAIL_DAILY_QUOTA: "10000000", SES_ENDPOINT: ses.url });
  const { driver } = await benchDb();
  const { getBackgroundDb, getRunStateDb } = await import("@/db/client");
  const { getRun } = await import("@/lib/services/runs/get-run");
  const { enqueueRun } = await import("@/lib/engine/pg/enqueue-run");
  const { createSender } = await import("@/lib/services/senders/create-sender");
  const { startEmbeddedExecutor, stopEmbeddedExecutor } = await import("@/lib/engine/drivers/embedded-executor");
  const executor = startEmbeddedExecutor({ getDb: getBackgroundDb, getRunStateDb, concurrency: 4, sweepIntervalMs: 3_600_000 });
  const load = () => os.loadavg().map((l) => l.toFixed(2)).join(",");
  let ok = true;

  // 1. SMTP
  const accountId = await benchAccount();
  const smtpSender = await createSender(accountId, {
    kind: "smtp", name: "Bench SMTP", from: "bench@example.com", ratePerSecond: SMTP_RATE,
    smtp: { host: "127.0.0.1", port: smtp.port!, secure: false },
  });
  const uploadId = await benchUpload(accountId, ["email", "name"], SMTP_EMAILS, (i) => [`person${i}@example.com`, `P${i}`]);
  const workflowId = await benchWorkflow(accountId, graph(uploadId, smtpSender.id));
  const t0 = Date.now();
  const { run } = await enqueueRun(accountId, workflowId, undefined);
  await executor.idle();
  const smtpSeconds = (Date.now() - t0) / 1000;
  const figures = await smtp.figures();
  // When the first email reached the server: what came before it (claim, rendering, ledger rows) apart from the sending.
  const firstSeconds = figures.firstEmailAt === null ? NaN : (figures.firstEmailAt - t0) / 1000;
  // When the last one did: the rate between the two is the pacing's; what follows is marking it sent and ending the run.
  const lastSeconds = figures.lastEmailAt === null ? NaN : (figures.lastEmailAt - t0) / 1000;
  const smtpRun = await getRun(accountId, run.runId, "map");
  const { distinct } = figures;
  const smtpOk = smtpRun.status === "SUCCESS" && distinct === SMTP_EMAILS && figures.delivered === SMTP_EMAILS;
  ok &&= smtpOk;
  console.log(
    `smtp-send SMTP: driver=${driver} emails=${SMTP_EMAILS} ratePerSecond=${SMTP_RATE} status=${smtpRun.status} emailsSent=${smtpRun.result?.emailsSent} ` +
      `messages=${figures.delivered} distinct=${distinct} time=${smtpSeconds.toFixed(2)}s floor=${(SMTP_EMAILS / SMTP_RATE).toFixed(1)}s ` +
      `(first email at ${firstSeconds.toFixed(2)}s, last at ${lastSeconds.toFixed(2)}s: ${((SMTP_EMAILS - 1) / (lastSeconds - firstSeconds)).toFixed(0)} emails/s between; ` +
      `the run ended ${(smtpSeconds - lastSeconds).toFixed(2)}s after the last) ` +
      `connections=${figures.connections} maxOpen=${figures.maxOpen} load=${load()}`,
  );

  // 2. Four workflows, one SES sender
  const sesAccount = await benchAccount();
  const sesSender = await createSender(sesAccount, {
    kind: "ses", name: "Bench SES", from: "bench@example.com",
    ses: { region: "eu-west-1", accessKeyId: "AKIABENCHBENCHBENCH0", secretAccessKey: "benchbenchbenchbenchbenchbench0000000000" },
  });
  const runIds: string[] = [];
  for (let w = 0; w < 4; w++) {
    const up = await benchUpload(sesAccount, ["email", "name"], SES_PER_WORKFLOW, (i) => [`w${w}-${i}@example.com`, `P${i}`]);
    const wf = await benchWorkflow(sesAccount, graph(up, sesSender.id));
    runIds.push((await enqueueRun(sesAccount, wf, undefined)).run.runId);
  }
  const t1 = performance.now();
  await executor.idle();
  const sesSeconds = (performance.now() - t1) / 1000;
  const runs = await Promise.all(runIds.map((id) => getRun(sesAccount, id, "map")));
  const total = 4 * SES_PER_WORKFLOW;
  const sesDistinct = new Set(ses.emails.map((e) => e.to[0])).size;
  const sesOk = runs.every((r) => r.status === "SUCCESS") && ses.emails.length === total && sesDistinct === total;
  ok &&= sesOk;
  console.log(
    `smtp-send SES: driver=${driver} workflows=4 emails=${total} MaxSendRate=${SES_RATE}/s statuses=${runs.map((r) => r.status).join(",")} ` +
      `delivered=${ses.emails.length} distinct=${sesDistinct} throttled=${ses.throttled} (waited out) time=${sesSeconds.toFixed(2)}s (from the enqueues) ` +
      `floor=${(total / SES_RATE).toFixed(1)}s load=${load()}`,
  );
  await stopEmbeddedExecutor();
  await smtp.close();
  await ses.close();
  await benchExit(ok ? 0 : 1);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
