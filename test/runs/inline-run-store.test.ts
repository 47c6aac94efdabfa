import { and, asc, eq, sql } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { execRows, getDb, getRunStateDb } from "@/db/client";
import * as ledger from "@/lib/engine/pg/send-ledger";
import { findUploadWithRows, readUploadRows, UploadPrefetch, wholeUploadOf } from "@/db/queries/upload-rows";
import { emailSends, nodeResults, runLogs, runs, suppressions, uploads, workflows } from "@/db/schema";
import { inlineStep } from "@/lib/engine/drivers/embedded-executor";
import { executeRun, type EngineDeps } from "@/lib/engine/core/execute-run";
import { pgEngineDeps } from "@/lib/engine/pg-engine";
import { pgNodePorts } from "@/lib/engine/pg-node-ports";
import { DEFERRED_RUNNING_MS, PgRunStore } from "@/lib/engine/pg/pg-run-store";
import type { Finalized } from "@/lib/engine/core/run-store";
import { newId } from "@/lib/ids";
import { createTestAccount } from "@/test/support/accounts";
import { emailEveryRowWorkflow, fakeResendForRuns, filteredEmailGraph, insertUpload, insertWorkflow, trigger, type TestGraph } from "./helpers";

/**
 * PgRunStore inline (the embedded executor, issue 18): node successes, log lines and deferred RUNNING writes are held
 * back and written with finalize (or after DEFERRED_RUNNING_MS); finalize claims the workflow's next run. What a person,
 * a resume and the send ledger see must stay what they saw before.
 */
const fake = fakeResendForRuns();

async function enqueueRaw(accountId: string, workflowId: string, graph: TestGraph): Promise<string> {
  const runId = newId("run");
  await (await getDb()).insert(runs).values({ id: runId, workflowId, accountId, workflowVersion: 1, graph });
  return runId;
}

const filterGraph: TestGraph = {
  nodes: [trigger, { id: "f", type: "FILTER", data: { source: "{{t.body}}", expr: "true" } }],
  edges: [{ source: "t", target: "f" }],
};

/** A new account's run of filterGraph, claimed by a new inline PgRunStore. */
async function claimedFilterRun() {
  const { id } = await createTestAccount();
  const workflowId = await insertWorkflow(id, filterGraph);
  const runId = await enqueueRaw(id, workflowId, filterGraph);
  const store = new PgRunStore(await getRunStateDb(), { inline: true });
  const claimed = await store.claimNext(workflowId);
  expect(claimed?.runId).toBe(runId);
  return { runId, store, claimed };
}

async function inlineDeps(store?: PgRunStore): Promise<EngineDeps & { store: PgRunStore }> {
  const db = await getDb();
  const inline = store ?? new PgRunStore(await getRunStateDb(), { inline: true });
  return { ...pgEngineDeps(db, async () => {}), ports: pgNodePorts(db, { inline: true }), store: inline };
}

const nodeRows = async (runId: string) =>
  (await getDb()).select().from(nodeResults).where(eq(nodeResults.runId, runId)).orderBy(asc(nodeResults.nodeId));
const logLines = async (runId: string) =>
  (await (await getDb()).select().from(runLogs).where(eq(runLogs.runId, runId)).orderBy(asc(runLogs.id))).map((l) => `${l.nodeId ?? "-"} ${l.message}`);
const workflowGraph = async (workflowId: string) =>
  (await (await getDb()).select().from(workflows).where(eq(workflows.id, workflowId)))[0].graph as TestGraph;
const runRow = async (runId: string) => (await (await getDb()).select().from(runs).where(eq(runs.id, runId)))[0];

describe("PgRunStore inline", () => {
  it("holds a quick run's node rows and log lines back and writes every one, in order, with finalize", async () => {
    const { runId, store, claimed } = await claimedFilterRun();
    await store.startNode(runId, "t");
    await store.nodeSucceeded(runId, "t", { output: { body: [1, 2] }, logMessages: ["Node \"t\" succeeded"] });
    await store.log(runId, "warn", "a line of the node", "f");
    await store.startNode(runId, "f");
    await store.nodeSucceeded(runId, "f", { output: { items: [1, 2], filteredOut: 0 }, itemsIn: 2, itemsOut: 2, logMessages: ["kept 2", "Node \"f\" succeeded"] });
    // Nothing written yet but what the claim wrote.
    expect((await nodeRows(runId)).map((r) => r.status)).toEqual(["PENDING", "PENDING"]);
    expect(await logLines(runId)).toEqual(["- Run started (workflow version 1)"]);
    // Outputs held back are read from memory.
    expect((await store.outputs(runId, ["t"])).get("t")).toEqual({ body: [1, 2] });
    const finalized = await store.finalize(claimed!, ["t", "f"], { cancelled: false });
    expect(finalized).toMatchObject({ status: "SUCCESS", changed: true });
    const rows = await nodeRows(runId);
    expect(rows.map((r) => [r.nodeId, r.status, r.output, r.itemsIn, r.itemsOut, r.error])).toEqual([
      ["f", "SUCCESS", { items: [1, 2], filteredOut: 0 }, 2, 2, null],
      ["t", "SUCCESS", { body: [1, 2] }, null, null, null],
    ]);
    for (const row of rows) {
      expect(row.startedAt).not.toBeNull();
      expect(row.startedAt!.getTime()).toBeLessThanOrEqual(row.completedAt!.getTime());
    }
    expect(await logLines(runId)).toEqual([
      "- Run started (workflow version 1)",
      't Node "t" succeeded',
      "f a line of the node",
      "f kept 2",
      'f Node "f" succeeded',
      "- Run succeeded: 0 email(s) sent, 0 row(s) filtered out, 0 row(s) read",
    ]);
    expect((await runRow(runId))?.status).toBe("SUCCESS");
  });

  it("finalizes a run it executed whole in one statement, and reads first after a cancel", async () => {
    for (const cancelled of [false, true]) {
      const { runId, store, claimed } = await claimedFilterRun();
      await store.startNode(runId, "t");
      await store.nodeSucceeded(runId, "t", { output: {}, logMessages: ["Node \"t\" succeeded"] });
      const execute = vi.spyOn(store.db, "execute");
      try {
        const finalized = await store.finalize(claimed!, ["t", "f"], { cancelled });
        expect(finalized).toMatchObject({ status: cancelled ? "FAILED" : "SUCCESS", changed: true });
        expect(execute).toHaveBeenCalledTimes(cancelled ? 2 : 1);
      } finally {
        execute.mockRestore();
      }
      // The node that never ran is SKIPPED either way, and the run's last line comes after the held one.
      expect((await nodeRows(runId)).map((r) => [r.nodeId, r.status])).toEqual([["f", "SKIPPED"], ["t", "SUCCESS"]]);
      expect((await logLines(runId)).slice(1)).toEqual([
        't Node "t" succeeded',
        cancelled ? "- Run cancelled: 0 email(s) sent before it stopped" : "- Run succeeded: 0 email(s) sent, 0 row(s) filtered out, 0 row(s) read",
      ]);
    }
  });

  it("shows a slow run as it is after DEFERRED_RUNNING_MS: finished nodes SUCCESS with their lines, the running one RUNNING", async () => {
    const { runId, store } = await claimedFilterRun();
    await store.startNode(runId, "t");
    await store.nodeSucceeded(runId, "t", { output: {}, logMessages: ["Node \"t\" succeeded"] });
    await store.startNode(runId, "f");
    await new Promise((resolve) => setTimeout(resolve, DEFERRED_RUNNING_MS + 400));
    const rows = await nodeRows(runId);
    expect(rows.map((r) => [r.nodeId, r.status])).toEqual([
      ["f", "RUNNING"],
      ["t", "SUCCESS"],
    ]);
    expect(rows[0].startedAt).not.toBeNull();
    expect(await logLines(runId)).toEqual(["- Run started (workflow version 1)", 't Node "t" succeeded']);
    // The node finishes later: its row keeps the start written then.
    await store.nodeFailed(runId, "f", "broke");
    const failed = (await nodeRows(runId))[0];
    expect(failed).toMatchObject({ status: "FAILED", error: "broke" });
    expect(failed.startedAt!.getTime()).toBe(rows[0].startedAt!.getTime());
  });

  it("writes a large output with markNodeSucceeded (in pieces) after what it holds, lines in order", async () => {
    const { runId, store } = await claimedFilterRun();
    await store.startNode(runId, "t");
    await store.nodeSucceeded(runId, "t", { output: {}, logMessages: ["first"] });
    await store.startNode(runId, "f");
    const items = Array.from({ length: 2_500 }, (_, i) => ({ i }));
    await store.nodeSucceeded(runId, "f", { output: { items }, itemsOut: items.length, logMessages: ["second"] });
    const rows = await nodeRows(runId);
    expect(rows.map((r) => r.status)).toEqual(["SUCCESS", "SUCCESS"]);
    expect(rows[0].spilled).not.toBeNull(); // stored in pieces by node-store.ts
    expect(await logLines(runId)).toEqual(["- Run started (workflow version 1)", "t first", "f second"]);
  });

  it("claims the workflow's next run in the statement that finishes one, in FIFO order, and answers null when none was left", async () => {
    const { id } = await createTestAccount();
    const { workflowId } = await emailEveryRowWorkflow(id, 1, `ahead-${Date.now()}-`);
    const graph = await workflowGraph(workflowId);
    const first = await enqueueRaw(id, workflowId, graph);
    const second = await enqueueRaw(id, workflowId, graph);
    const deps = await inlineDeps();
    const claimed = await deps.store.claimNext(workflowId);
    expect(claimed?.runId).toBe(first);
    await executeRun(inlineStep, deps, first, claimed!);
    // The finishing statement claimed and started the next run.
    const next = await runRow(second);
    expect(next?.status).toBe("RUNNING");
    expect((await nodeRows(second)).map((r) => r.status)).toEqual(["PENDING", "PENDING", "PENDING"]);
    const again = await deps.store.claimNext(workflowId);
    expect(again?.runId).toBe(second);
    await executeRun(inlineStep, deps, second, again!);
    expect(await runRow(second)).toMatchObject({ status: "SUCCESS", error: null });
    expect(await deps.store.claimNext(workflowId)).toBeNull();
    expect(await runRow(first)).toMatchObject({ status: "SUCCESS", result: { emailsSent: 1, totalRows: 1 } });
  });

  it("a crash before the held writes: the resumed run executes those nodes again and sends no email twice", async () => {
    const { id } = await createTestAccount();
    const { workflowId, addresses } = await emailEveryRowWorkflow(id, 2, `crash-${Date.now()}-`);
    const graph = await workflowGraph(workflowId);
    const runId = await enqueueRaw(id, workflowId, graph);
    // A process that dies just before its finalize: nothing it held is written.
    class Crashing extends PgRunStore {
      override async finalize(): Promise<Finalized> {
        throw new Error("process killed");
      }
    }
    const crashing = new Crashing(await getRunStateDb(), { inline: true });
    const deps = await inlineDeps(crashing);
    const claimed = await crashing.claimNext(workflowId);
    await expect(executeRun(inlineStep, deps, runId, claimed!)).rejects.toThrow("process killed");
    crashing.abandon(runId);
    // OUTPUT's success was held (the earlier nodes' may have been written by the timer on a slow machine).
    expect(["PENDING", "RUNNING"]).toContain((await nodeRows(runId))[0].status);
    expect(await logLines(runId)).not.toContain('out Sent 2 emails');
    const sentBefore = fake.resend.emails().filter((e) => e.to.some((to) => addresses.includes(to))).length;
    expect(sentBefore).toBe(2);
    // Another process resumes it (the sweep's takeover): every node runs again, the ledger sends nothing twice.
    await executeRun(inlineStep, await inlineDeps(), runId);
    expect((await nodeRows(runId)).map((r) => [r.nodeId, r.status])).toEqual([
      ["out", "SUCCESS"],
      ["src", "SUCCESS"],
      ["t", "SUCCESS"],
    ]);
    const run = await runRow(runId);
    expect(run).toMatchObject({ status: "SUCCESS" });
    expect(run?.result).toMatchObject({ emailsSent: 2, totalRows: 2 });
    expect(fake.resend.emails().filter((e) => e.to.some((to) => addresses.includes(to))).length).toBe(2);
    const lines = await logLines(runId);
    expect(lines).toContain("- Run resumed after an interruption");
    expect(lines.at(-1)).toBe("- Run succeeded: 2 email(s) sent, 0 row(s) filtered out, 2 row(s) read");
  });
});

describe("inline store and Inngest's store finish a run alike", () => {
  /** The same run executed by the embedded executor's store (inline: held writes, claim-ahead) and by Inngest's. */
  async function bothWays(accountId: string, graph: TestGraph, setup: (runId: string) => Promise<void> = async () => {}) {
    const outcomes = [];
    for (const inline of [true, false]) {
      const workflowId = await insertWorkflow(accountId, graph);
      const runId = await enqueueRaw(accountId, workflowId, graph);
      await setup(runId);
      const deps = await inlineDeps(new PgRunStore(await getRunStateDb(), { inline }));
      const claimed = await deps.store.claimNext(workflowId);
      await executeRun(inlineStep, deps, runId, claimed!);
      const run = await runRow(runId);
      const lines = await logLines(runId);
      const nodes = (await nodeRows(runId)).map((r) => [r.nodeId, r.status, r.error]);
      outcomes.push({ status: run?.status, error: run?.error, result: run?.result, last: lines.at(-1), nodes });
    }
    expect(outcomes[0]).toEqual(outcomes[1]);
    return outcomes[0];
  }

  it("same status, result, last log line and node rows: counts, suppressed and duplicates, a failure, a cancel and a preview", async () => {
    const { id } = await createTestAccount();
    const db = await getDb();
    const rows = [["a@example.com", "5"], ["b@example.com", "1"], ["a@example.com", "4"], ["s@example.com", "5"]];
    const uploadId = await insertUpload(id, ["email", "rating"], rows);
    await db.insert(suppressions).values({ accountId: id, email: "s@example.com", reason: "unsubscribed" });
    const graph = filteredEmailGraph(uploadId, "rating >= 4");
    const sent = await bothWays(id, graph);
    expect(sent).toMatchObject({ status: "SUCCESS", result: { emailsSent: 1, filteredOut: 1, totalRows: 4, suppressed: 1, duplicates: 1 } });
    expect(sent.last).toBe("- Run succeeded: 1 email(s) sent, 1 row(s) filtered out, 4 row(s) read");
    const failed = await bothWays(id, { ...graph, nodes: graph.nodes.map((n) => (n.id === "src" ? { ...n, data: { uploadId: "upl_missing" } } : n)) });
    expect(failed).toMatchObject({ status: "FAILED" });
    expect(failed.nodes.map((n) => n[1])).toEqual(["SKIPPED", "SKIPPED", "FAILED", "SUCCESS"]); // f, out, src, t
    const cancelled = await bothWays(id, graph, async (runId) => {
      await db.update(runs).set({ cancelRequestedAt: new Date() }).where(eq(runs.id, runId));
    });
    expect(cancelled).toMatchObject({ status: "FAILED", error: "Cancelled", last: "- Run cancelled: 0 email(s) sent before it stopped" });
    const preview = await bothWays(id, graph, async (runId) => {
      await db.update(runs).set({ mode: "preview" }).where(eq(runs.id, runId));
    });
    expect(preview).toMatchObject({ status: "SUCCESS", result: { emailsSent: 0, emailsPlanned: 1, suppressed: 1, duplicates: 1 } });
  });
});

describe("DATA_SOURCE in one round trip", () => {
  it("findUploadWithRows answers a small upload with the rows readUploadRows gives (remembered whole), a larger one without", async () => {
    const { id: accountId } = await createTestAccount();
    const db = await getDb();
    const rows = [["a@example.com", "1"], ["b@example.com", "2"], ["c@example.com", "3"]];
    const small = await insertUpload(accountId, ["email", "n"], rows, 2); // 2 chunks: one page
    const found = await findUploadWithRows(db, accountId, small);
    expect(found?.upload).toMatchObject({ id: small, columns: ["email", "n"], rowCount: 3 });
    expect(found?.rows).toEqual(await readUploadRows(db, found!.upload, 0, 3));
    expect(wholeUploadOf(found!.rows!)).toBe(small);
    const large = await insertUpload(accountId, ["email", "n"], rows, 1); // 3 chunks: more than a page
    expect(await findUploadWithRows(db, accountId, large)).toEqual({ upload: { id: large, columns: ["email", "n"], rowCount: 3 } });
    expect(await findUploadWithRows(db, "usr_other", small)).toBeUndefined();
  });

  it("a claim reads the uploads its run's DATA_SOURCE nodes name, for the job's ports; never a deleted one or another account's", async () => {
    const { id: accountId } = await createTestAccount();
    const { id: otherAccountId } = await createTestAccount();
    const db = await getDb();
    const rows = [["a@example.com", "1"], ["b@example.com", "2"], ["c@example.com", "3"]];
    const small = await insertUpload(accountId, ["email", "n"], rows, 2);
    const large = await insertUpload(accountId, ["email", "n"], rows, 1); // 3 chunks: its rows are read apart
    const deleted = await insertUpload(accountId, ["email", "n"], rows, 2);
    await db.update(uploads).set({ deletedAt: new Date() }).where(eq(uploads.id, deleted));
    const foreign = await insertUpload(otherAccountId, ["email", "n"], rows, 2);
    const graph: TestGraph = {
      nodes: [trigger, ...[small, large, deleted, foreign].map((uploadId, i) => ({ id: `s${i}`, type: "DATA_SOURCE", data: { uploadId } }))],
      edges: [0, 1, 2, 3].map((i) => ({ source: "t", target: `s${i}` })),
    };
    const workflowId = await insertWorkflow(accountId, graph);
    const first = await enqueueRaw(accountId, workflowId, graph);
    const second = await enqueueRaw(accountId, workflowId, graph);
    const prefetch = new UploadPrefetch();
    const store = new PgRunStore(await getRunStateDb(), { inline: true, uploadPrefetch: prefetch });
    const ports = pgNodePorts(db, { inline: true, uploadPrefetch: prefetch });
    const expectPrefetched = async () => {
      const read = prefetch.find(accountId, small);
      expect(read?.upload).toEqual({ id: small, columns: ["email", "n"], rowCount: 3 });
      expect(read?.rows).toEqual(await readUploadRows(db, read!.upload, 0, 3));
      expect(wholeUploadOf(read!.rows!)).toBe(small);
      expect(prefetch.find(accountId, large)).toEqual({ upload: { id: large, columns: ["email", "n"], rowCount: 3 } });
      expect(prefetch.find(accountId, deleted)).toBeUndefined();
      expect(prefetch.find(accountId, foreign)).toBeUndefined();
      expect(prefetch.find(otherAccountId, small)).toBeUndefined();
      // The port answers from the claim when it can, and reads as before when it cannot (the node then fails as before).
      expect((await ports.uploads.findWithRows!(accountId, small))?.rows?.map((r) => r.email)).toEqual(["a@example.com", "b@example.com", "c@example.com"]);
      expect(await ports.uploads.findWithRows!(accountId, deleted)).toBeUndefined();
      expect(await ports.uploads.findWithRows!(accountId, foreign)).toBeUndefined();
    };
    const claimed = await store.claimNext(workflowId);
    expect(claimed?.runId).toBe(first);
    expect(claimed).not.toHaveProperty("uploads"); // the rows go to the ports, not into the run's snapshot
    await expectPrefetched();
    // The next run, claimed ahead by the statement that finishes this one, comes with them too.
    const finalized = await store.finalize(claimed!, graph.nodes.map((n) => n.id), { cancelled: false });
    expect(finalized.changed).toBe(true);
    prefetch.set(accountId, []);
    expect(prefetch.find(accountId, small)).toBeUndefined();
    expect((await store.claimNext(workflowId))?.runId).toBe(second);
    await expectPrefetched();
  });
});

/** A new account's run whose node "one" has recorded four pending emails, r0–r3@example.com (no node row yet). */
async function fourPendingEmails() {
  const { id: accountId } = await createTestAccount();
  const db = await getDb();
  const workflowId = await insertWorkflow(accountId, filterGraph);
  const key = { chainRunId: await enqueueRaw(accountId, workflowId, filterGraph), nodeId: "one", accountId };
  await ledger.recordEmails(db, key, Array.from({ length: 4 }, (_, i) => ({ itemIndex: i, to: `r${i}@example.com`, subject: "s", status: "pending" as const })));
  return { accountId, db, key };
}

describe("send ledger in one round trip", () => {
  it("recordAndBegin records, reopens and counts as recordEmails + beginSending, with the first batch's pending emails", async () => {
    const { id: accountId } = await createTestAccount();
    const db = await getDb();
    const emails = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ itemIndex: i, to: `r${i}@example.com`, subject: "s", status: (i === 4 ? "duplicate" : "pending") as "pending" | "duplicate" }));
    // Two nodes with the same history: an earlier attempt sent item 0, failed item 1 and left item 2 pending.
    const workflowId = await insertWorkflow(accountId, filterGraph);
    const keys = [
      { chainRunId: await enqueueRaw(accountId, workflowId, filterGraph), nodeId: "one", accountId },
      { chainRunId: await enqueueRaw(accountId, workflowId, filterGraph), nodeId: "two", accountId },
    ];
    for (const key of keys) {
      await ledger.recordEmails(db, key, emails(3));
      await ledger.markSent(db, key, [{ itemIndex: 0, providerId: "p0" }]);
      await db.update(emailSends).set({ status: "failed" }).where(and(eq(emailSends.runId, key.chainRunId), eq(emailSends.itemIndex, 1)));
    }
    await ledger.recordEmails(db, keys[0], emails(6));
    const before = await ledger.beginSending(db, keys[0], keys[0].chainRunId);
    // A quota the day's count of rows recorded pending (8: the duplicate is not) plus this node's 4 does not settle:
    // the exact count answers.
    const begun = await ledger.recordAndBegin(db, keys[1], keys[1].chainRunId, emails(6), { firstTo: 3, quota: 11 });
    expect(begun.thisNode).toBe(before.thisNode);
    expect(begun.thisNode).toBe(4);
    // The account's other emails today, as beginSending counts them after the insert.
    expect(begun.usedToday).toBe((await ledger.beginSending(db, keys[1], keys[1].chainRunId)).usedToday);
    expect(begun.usedToday).toBe(5);
    expect(await ledger.countByStatus(db, keys[1].chainRunId, "two")).toEqual(await ledger.countByStatus(db, keys[0].chainRunId, "one"));
    expect(begun.first?.indexes).toEqual((await ledger.pendingInRange(db, keys[1], keys[1].chainRunId, 0, 3)).indexes);
    expect(begun.first?.indexes).toEqual([1, 2]);
    // markSentAndCount: markSent + writeProgress.
    await ledger.markSent(db, keys[0], [{ itemIndex: 1, providerId: "x" }]);
    const expected = await ledger.writeProgress(db, keys[0], keys[0].chainRunId);
    expect(await ledger.markSentAndCount(db, keys[1], keys[1].chainRunId, [{ itemIndex: 1, providerId: "x" }])).toEqual(expected);
  });

  it("recordAndBegin settles the daily quota with the day's count of recorded rows when that is within it, else counts exactly", async () => {
    const { accountId, db, key } = await fourPendingEmails();
    await db.update(emailSends).set({ status: "failed" }).where(and(eq(emailSends.runId, key.chainRunId), eq(emailSends.itemIndex, 3)));
    const workflowId = await insertWorkflow(accountId, filterGraph);
    const two = (runId: string) => Array.from({ length: 2 }, (_, i) => ({ itemIndex: i, to: `n${i}@${runId}.example.com`, subject: "s", status: "pending" as const }));
    const other = { chainRunId: await enqueueRaw(accountId, workflowId, filterGraph), nodeId: "two", accountId };
    // Far from the quota: the answer is the count of the 4 rows recorded pending today, the failed one included (never
    // less than the 3 the quota counts), and no email scan was needed.
    const far = await ledger.recordAndBegin(db, other, other.chainRunId, two(other.chainRunId), { firstTo: 2, quota: 1_000 });
    expect(far).toMatchObject({ usedToday: 4, thisNode: 2 });
    expect((await ledger.beginSending(db, other, other.chainRunId)).usedToday).toBe(3);
    // A node with nothing to send has no quota to check: no count (0), whatever the day holds.
    expect(await ledger.beginSending(db, { ...other, nodeId: "nothing" }, other.chainRunId)).toEqual({ usedToday: 0, thisNode: 0 });
    // Near it: 6 rows recorded today + 2 is over 7, the exact figure (3 + 2 pending of `other`) + 2 is not.
    const third = { chainRunId: await enqueueRaw(accountId, workflowId, filterGraph), nodeId: "three", accountId };
    const near = await ledger.recordAndBegin(db, third, third.chainRunId, two(third.chainRunId), { firstTo: 2, quota: 7 });
    expect(near).toMatchObject({ usedToday: 5, thisNode: 2, first: { indexes: [0, 1] } });
    // Over it even exactly: the figures say so (the node fails on them; no slot is taken).
    const fourth = { chainRunId: await enqueueRaw(accountId, workflowId, filterGraph), nodeId: "four", accountId };
    expect(await ledger.recordAndBegin(db, fourth, fourth.chainRunId, two(fourth.chainRunId), { firstTo: 2, quota: 8 })).toMatchObject({ usedToday: 7, thisNode: 2 });
    // Recorded again (a resume): nothing is inserted, nothing counted. A duplicate is not counted either.
    await ledger.recordEmails(db, other, [...two(other.chainRunId), { itemIndex: 2, to: "n0@example.com", subject: "s", status: "duplicate" }]);
    const days = await execRows<{ today: boolean; n: number }>(
      db,
      sql`select day = (now() at time zone 'utc')::date as today, sum(n)::int as n from email_quota_counts where account_id = ${accountId} group by 1`,
    );
    expect(days).toEqual([{ today: true, n: 10 }]);
    // EMAIL_DAILY_QUOTA is any positive integer, past PostgreSQL's int too.
    const fifth = { chainRunId: await enqueueRaw(accountId, workflowId, filterGraph), nodeId: "five", accountId };
    expect(await ledger.recordAndBegin(db, fifth, fifth.chainRunId, two(fifth.chainRunId), { firstTo: 2, quota: 5_000_000_000 })).toMatchObject({ usedToday: 10, thisNode: 2 });
  });

  it("markSent answers the rows it changed once; writeSentProgress sets sent from the ledger, keeps total, never moves back", async () => {
    const { db, key } = await fourPendingEmails();
    await db.insert(nodeResults).values({ runId: key.chainRunId, nodeId: "one", type: "OUTPUT", status: "RUNNING", progress: { sent: 0, total: 9 } });
    const progress = async () => (await db.select().from(nodeResults).where(and(eq(nodeResults.runId, key.chainRunId), eq(nodeResults.nodeId, "one"))))[0].progress;
    const sent = [{ itemIndex: 0, providerId: "p0" }, { itemIndex: 2, providerId: "p2" }];
    expect(await ledger.markSent(db, key, sent)).toBe(2);
    expect(await ledger.markSent(db, key, sent)).toBe(0); // a repeated statement changes nothing
    await ledger.writeSentProgress(db, key, key.chainRunId);
    expect(await progress()).toEqual({ sent: 2, total: 9 });
    await db.update(nodeResults).set({ progress: { sent: 3, total: 9 } }).where(and(eq(nodeResults.runId, key.chainRunId), eq(nodeResults.nodeId, "one")));
    await ledger.writeSentProgress(db, key, key.chainRunId); // an older count never lowers what a later write said
    expect(await progress()).toEqual({ sent: 3, total: 9 });
  });

  it("pendingInRange re-checks the suppressions added since the node started (every one while its start is unknown)", async () => {
    const { accountId, db, key } = await fourPendingEmails();
    const hourAgo = new Date(Date.now() - 3_600_000);
    const status = async () =>
      (await db.select().from(emailSends).where(eq(emailSends.runId, key.chainRunId)).orderBy(asc(emailSends.itemIndex))).map((r) => r.status);
    // No start written (the node's RUNNING write held back): every suppression counts, an hour-old one too.
    await db.insert(suppressions).values({ accountId, email: "r1@example.com", reason: "manual", createdAt: hourAgo });
    expect((await ledger.pendingInRange(db, key, key.chainRunId, 0, 2)).indexes).toEqual([0]);
    // Started now: the rows were checked when recorded, so only what was added since (or up to 5 minutes before) counts.
    await db.insert(nodeResults).values({ runId: key.chainRunId, nodeId: "one", type: "OUTPUT", status: "RUNNING", startedAt: new Date() });
    await db.insert(suppressions).values({ accountId, email: "r2@example.com", reason: "manual", createdAt: hourAgo });
    expect((await ledger.pendingInRange(db, key, key.chainRunId, 2, 4)).indexes).toEqual([2, 3]);
    await db.insert(suppressions).values({ accountId, email: "r3@example.com", reason: "unsubscribed" });
    await db.insert(suppressions).values({ accountId: (await createTestAccount()).id, email: "r2@example.com", reason: "manual" }); // another account's
    expect((await ledger.pendingInRange(db, key, key.chainRunId, 2, 4)).indexes).toEqual([2]);
    expect(await status()).toEqual(["pending", "suppressed", "pending", "suppressed"]);
  });
});
