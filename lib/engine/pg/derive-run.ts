import "server-only";
import { sql } from "drizzle-orm";
import { execRows, getDb, type Db } from "@/db/client";
import type { NodeStatus, RunMode, RunStatus } from "@/db/schema";
import { wakeAfterResponse } from "../drivers/wake";
import type { GraphNode } from "@/lib/graph/schema";
import { AppError, notFound } from "@/lib/errors";
import { newId } from "@/lib/ids";
import { currentTraceparent } from "@/lib/observability/trace-context";

/** What the caller sees of the run it derives from, to decide whether deriving is allowed. */
export type SourceRun = {
  runId: string;
  workflowId: string;
  status: RunStatus;
  mode: RunMode;
  /** A "test this node" preview's node (`until`): only it and its ancestors ran. */
  untilNodeId: string | null;
  /** Outputs dropped by RUN_OUTPUT_RETENTION_DAYS: nothing can be reused any more. */
  outputsExpired: boolean;
};

export type DeriveRunOptions = {
  accountId: string;
  sourceRunId: string;
  /**
   * `retry` joins the source's retry chain (same send ledger); `send` (a preview's) starts a chain of its own;
   * `resend_unknown` joins the source's chain too, and its OUTPUT nodes send only the emails of unknown fate.
   */
  trigger: "retry" | "send" | "resend_unknown";
  /** Default: the source's mode for a retry (a failed preview is retried as a preview), "live" for a send. */
  mode?: RunMode;
  /** Which of the source's SUCCESS nodes are copied (`reused: true`) instead of executed again. */
  reuseNode: (node: GraphNode) => boolean;
  /** Throws an AppError when the source may not be derived from (e.g. 409 run_not_failed); runs under the source's row lock. */
  check?: (source: SourceRun) => void;
  /** When a run already derives from the source with this trigger, throw this instead of deriving a second one. */
  once?: AppError;
};

export type DerivedRun = {
  runId: string;
  workflowId: string;
  status: "PENDING";
  enqueuedAt: string;
  retryOf?: string;
  sendOf?: string;
  resendOf?: string;
};

/**
 * enqueueDerivedRun({ accountId, sourceRunId, trigger: "retry" | "send" | "resend_unknown", mode: "live", reuseNode, check?, once? })
 *   → Promise<DerivedRun>
 *
 * The "reuse" of run control: a new run of the source run's graph snapshot (same workflow version), queued at the
 * tail of the workflow's FIFO, that starts from the source's results. Every node SUCCESS in the source for which
 * `reuseNode(node)` is true is copied now, in the same transaction (status SUCCESS, same output and item counts,
 * the source's startedAt/completedAt, `reused: true`); the engine treats a copied node as already done, exactly as
 * when it resumes a run, so it never executes again. The rest executes as usual.
 *
 * - retry: `retry_of` = source, `chain_root_id` = the source's chain root, so `runtime.ledgerRunId` is the chain's
 *   first run and the send ledger never sends an (OUTPUT node, item) the chain already sent.
 * - send: `send_of` = source, the new run is its own chain root (a preview sent nothing).
 * The workflow must still exist (404 otherwise); unknown or another account's run: 404. Sends the wake-up after
 * the response.
 */
export async function enqueueDerivedRun(options: DeriveRunOptions): Promise<DerivedRun> {
  const db = await getDb();
  const run = await db.transaction((tx) => deriveIn(tx as unknown as Db, options));
  wakeAfterResponse(run.workflowId);
  return run;
}

type SourceRow = {
  id: string;
  workflow_id: string;
  status: RunStatus;
  mode: RunMode;
  until_node_id: string | null;
  graph: { nodes?: GraphNode[] };
  chain_root_id: string | null;
  outputs_expired_at: string | null;
  workflow_alive: boolean;
  derived: string | null;
};

async function deriveIn(db: Db, options: DeriveRunOptions): Promise<DerivedRun> {
  const link = options.trigger === "retry" ? "retry_of" : options.trigger === "send" ? "send_of" : "resend_of";
  // The row lock serializes two derivations of one source, so `once` holds under concurrent requests.
  const [source] = await execRows<SourceRow>(
    db,
    sql`select r.id, r.workflow_id, r.status, r.mode, r.until_node_id, r.graph, r.chain_root_id, r.outputs_expired_at::text,
          exists (select 1 from workflows w where w.id = r.workflow_id and w.deleted_at is null) as workflow_alive,
          (select d.id from runs d where d.${sql.raw(link)} = r.id limit 1) as derived
        from runs r where r.id = ${options.sourceRunId} and r.account_id = ${options.accountId}
        for update of r`,
  );
  if (!source) throw notFound("Run");
  options.check?.({
    runId: source.id,
    workflowId: source.workflow_id,
    status: source.status,
    mode: source.mode,
    untilNodeId: source.until_node_id,
    outputsExpired: source.outputs_expired_at !== null,
  });
  if (options.once && source.derived) throw options.once;
  if (!source.workflow_alive) throw new AppError("conflict", "The run's workflow was deleted: it cannot run again.");
  if (source.outputs_expired_at !== null) {
    throw new AppError("output_expired", "This run's node outputs were removed by the retention policy: run the workflow again instead.");
  }

  const id = newId("run");
  const mode = options.mode ?? (options.trigger === "retry" ? source.mode : "live");
  const chainRoot = options.trigger !== "send" ? (source.chain_root_id ?? source.id) : null;
  const [inserted] = await execRows<{ enqueued_at: string | Date }>(
    db,
    sql`insert into runs (id, workflow_id, account_id, workflow_version, graph, trigger, mode, until_node_id, trigger_body,
                          ${sql.raw(link)}, chain_root_id, traceparent)
        select ${id}, r.workflow_id, r.account_id, r.workflow_version, r.graph, ${options.trigger}, ${mode},
               case when ${mode} = 'preview' then r.until_node_id end, r.trigger_body, r.id, ${chainRoot}, ${currentTraceparent()}
        from runs r where r.id = ${source.id}
        returning enqueued_at`,
  );

  const nodes = Array.isArray(source.graph?.nodes) ? source.graph.nodes : [];
  const reusable = await execRows<{ node_id: string; status: NodeStatus }>(
    db,
    sql`select node_id, status from node_results where run_id = ${source.id} and status = 'SUCCESS'`,
  );
  const succeeded = new Set(reusable.map((r) => r.node_id));
  const reuse = nodes.filter((n) => succeeded.has(n.id) && options.reuseNode(n)).map((n) => n.id);
  if (reuse.length > 0) {
    // Copied inside PostgreSQL: a DATA_SOURCE output may hold 100,000 rows.
    await db.execute(sql`
      insert into node_results (run_id, node_id, type, status, output, spilled, items_in, items_out, reused, started_at, completed_at)
      select ${id}, node_id, type, 'SUCCESS', output, spilled, items_in, items_out, true, started_at, completed_at
      from node_results where run_id = ${source.id} and status = 'SUCCESS'
        and node_id in (select jsonb_array_elements_text(${JSON.stringify(reuse)}::jsonb))`);
    // The pieces of their large arrays (db/queries/node-outputs.ts) too: text stored as it is, no parsing.
    await db.execute(sql`
      insert into node_output_chunks (run_id, node_id, field, seq, items)
      select ${id}, p.node_id, p.field, p.seq, p.items
      from node_output_chunks p join node_results n on n.run_id = p.run_id and n.node_id = p.node_id
      where p.run_id = ${source.id} and n.status = 'SUCCESS' and n.spilled ? p.field
        and p.node_id in (select jsonb_array_elements_text(${JSON.stringify(reuse)}::jsonb))`);
  }
  const what = options.trigger === "retry" ? `Retry of ${source.id}` : options.trigger === "send" ? `Send of preview ${source.id}` : `Resend of the emails of unknown fate of ${source.id}`;
  const reused = reuse.length > 0 ? `: reuses ${reuse.length} node(s) (${reuse.join(", ")})` : "";
  await db.execute(sql`insert into run_logs (run_id, level, message) values (${id}, 'info', ${what + reused})`);
  return {
    runId: id,
    workflowId: source.workflow_id,
    status: "PENDING",
    enqueuedAt: new Date(inserted.enqueued_at).toISOString(),
    ...(options.trigger === "retry" ? { retryOf: source.id } : options.trigger === "send" ? { sendOf: source.id } : { resendOf: source.id }),
  };
}
