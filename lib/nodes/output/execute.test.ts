import { describe, expect, it } from "vitest";
import { EmailSendError } from "@/lib/email/types";
import { fakeRuntime } from "../__tests__/fake-runtime";
import { MemorySendLedger, memoryOutputPorts, RecordingSender } from "../__tests__/memory-ports";
import type { NodePorts } from "../ports";
import { NodeError, type NodeOf, type NodeOutcome, type NodeRuntime } from "../types";
import { outputExecutor } from "./execute";

// OUTPUT's rules against in-memory ports: what is sent, once, and what is counted. The PostgreSQL ledger's own
// statements are tested in test/sending/.

const node = (data: Record<string, unknown> = {}) =>
  ({
    id: "out",
    type: "OUTPUT",
    data: { forEach: "{{src.rows}}", to: "{{item.email}}", subject: "Hi {{item.name}}", body: "Dear {{item.name}}", ...data },
  }) as NodeOf<"OUTPUT">;

const people = (n: number, offset = 0) => Array.from({ length: n }, (_, i) => ({ email: `p${i + offset}@example.com`, name: `P${i + offset}` }));

function runtime(rows: Record<string, unknown>[], ports: NodePorts, over: Partial<NodeRuntime> = {}): NodeRuntime {
  return { ...fakeRuntime({ src: { rows } }), ports, ...over };
}

/** Executes the node as the engine does: its first step, then each batch, then its completion. */
async function runNode(n: NodeOf<"OUTPUT">, rt: NodeRuntime): Promise<NodeOutcome | "stopped"> {
  const first = await outputExecutor.execute(n, rt);
  if (first.kind === "done") return first;
  for (let batch = 0; batch < first.batches; batch++) if ((await outputExecutor.runBatch!(n, rt, batch)) === "stopped") return "stopped";
  return outputExecutor.complete!(n, rt);
}

function setup(fail?: ConstructorParameters<typeof RecordingSender>[0]) {
  const ledger = new MemorySendLedger();
  const sender = new RecordingSender(fail);
  return { ledger, sender, ports: memoryOutputPorts(ledger, sender) };
}

describe("OUTPUT on in-memory ports", () => {
  it("sends one email per distinct address (case and spaces aside) unless dedupe is off", async () => {
    const rows = [{ email: "Ann@Example.com", name: "A" }, { email: " ann@example.com", name: "A2" }, { email: "bob@example.com", name: "B" }];
    const deduped = setup();
    const outcome = await runNode(node(), runtime(rows, deduped.ports));
    expect(deduped.sender.delivered).toEqual(["ann@example.com", "bob@example.com"]);
    expect(outcome).toMatchObject({ output: { emailsSent: 2, duplicates: 1, suppressed: 0 }, itemsIn: 3, itemsOut: 2 });

    const all = setup();
    await runNode(node({ dedupe: false }), runtime(rows, all.ports));
    expect(all.sender.delivered).toEqual(["ann@example.com", "ann@example.com", "bob@example.com"]);
  });

  it("skips suppressed addresses when recording and again at send time", async () => {
    const { ledger, sender, ports } = setup();
    ledger.suppress("usr_test", "p1@example.com");
    const rt = runtime(people(150), ports);
    const n = node();
    const first = await outputExecutor.execute(n, rt);
    expect(first).toEqual({ kind: "batched", batches: 2 });
    // An unsubscribe while the node runs: the second batch does not send to it.
    ledger.suppress("usr_test", "p120@example.com");
    for (const batch of [0, 1]) await outputExecutor.runBatch!(n, rt, batch);
    const outcome = await outputExecutor.complete!(n, rt);
    expect(sender.delivered).not.toContain("p1@example.com");
    expect(sender.delivered).not.toContain("p120@example.com");
    expect(sender.delivered).toHaveLength(148);
    expect(outcome).toMatchObject({ output: { emailsSent: 148, suppressed: 2 } });
    expect(outcome.log).toBe("Sent 148 emails (skipped: 2 suppressed)");
  });

  it("sends 100 emails per provider call, each batch and email under a key stable across attempts", async () => {
    const { ledger, sender, ports } = setup();
    const rt = runtime(people(250), ports);
    const outcome = await runNode(node(), rt);
    expect(sender.calls.map((c) => [c.emails.length, c.batchKey])).toEqual([
      [100, "run_test:out:batch:0:100"],
      [100, "run_test:out:batch:1:100"],
      [50, "run_test:out:batch:2:50"],
    ]);
    expect(sender.calls[2].emails[0].idempotencyKey).toBe("run_test:out:200");
    expect(outcome).toMatchObject({ output: { emailsSent: 250 } });
    expect(ledger.progress.get("run_test:out")).toEqual({ sent: 250, total: 250 });
    expect(ledger.row({ chainRunId: "run_test", nodeId: "out" }, 249)).toMatchObject({ status: "sent", providerId: "msg_3_49" });
  });

  it("sends nothing twice when a batch runs again (a resumed run, in another process)", async () => {
    const { sender, ports } = setup();
    const n = node();
    await outputExecutor.execute(n, runtime(people(150), ports));
    await outputExecutor.runBatch!(n, runtime(people(150), ports), 0);
    // The process died after the first batch: another one resumes the node with a runtime of its own.
    const resumed = runtime(people(150), ports);
    for (const batch of [0, 1]) await outputExecutor.runBatch!(n, resumed, batch);
    expect(sender.calls.map((c) => c.emails.length)).toEqual([100, 50]);
    expect(new Set(sender.delivered).size).toBe(150);
  });

  it("a retry of a failed run sends only what its chain has not sent", async () => {
    const refuseSecondCall = (attempt: number) => (attempt === 2 ? new EmailSendError("invalid from", false) : undefined);
    const { ledger, sender, ports } = setup(refuseSecondCall);
    const n = node();
    await expect(runNode(n, runtime(people(150), ports))).rejects.toThrow(NodeError);
    // The unsent emails were marked failed: they stop counting against the daily quota.
    expect(ledger.counts("run_test", "out")).toMatchObject({ sent: 100, failed: 50, pending: 0 });

    const retry = runtime(people(150), ports, { runId: "run_retry", trigger: "retry" });
    const outcome = await runNode(n, retry);
    expect(sender.calls.map((c) => c.emails.length)).toEqual([100, 50]);
    expect(sender.attempts).toBe(3);
    expect(new Set(sender.delivered).size).toBe(150);
    expect(outcome).toMatchObject({ output: { emailsSent: 150 } });
  });

  it("fails before any email when the daily quota cannot take the node's emails", async () => {
    const { ledger, sender, ports } = setup();
    ledger.sentTodayElsewhere.set("usr_test", 95);
    const limited = { ...ports, sendLimits: { ...ports.sendLimits, dailyQuota: 100 } };
    await expect(runNode(node(), runtime(people(10), limited))).rejects.toThrow(/daily email quota \(EMAIL_DAILY_QUOTA, 100\) is used up: 95 workflow emails/);
    expect(sender.calls).toHaveLength(0);
    expect(ledger.counts("run_test", "out")).toMatchObject({ failed: 10, pending: 0 });
  });

  it("records a preview's emails with their bodies and sends none", async () => {
    const { ledger, sender, ports } = setup();
    ledger.suppress("usr_test", "p0@example.com");
    const outcome = await runNode(node(), runtime(people(3), ports, { mode: "preview" }));
    expect(sender.calls).toHaveLength(0);
    expect(outcome).toMatchObject({ output: { emailsSent: 0, emailsPlanned: 2, suppressed: 1, duplicates: 0 } });
  });
});
