import type { Graph } from "@/lib/graph/schema";
import type { RunMode, RunTrigger } from "@/lib/schemas/runs";
import type { EmailIdentity, RunInfo } from "../core/runtime";

/** The columns of `runs` a run's snapshot is read from (by the claim and by loadRun): see runFromRow. */
export const RUN_COLUMNS =
  "id, workflow_id, account_id, graph, workflow_version, mode, trigger, until_node_id, coalesce(chain_root_id, id) as ledger_run_id, trigger_body, traceparent, email_identity";

export type RunRow = {
  id: string;
  workflow_id: string;
  account_id: string;
  graph: unknown;
  workflow_version: number;
  mode?: string;
  trigger?: string;
  until_node_id?: string | null;
  ledger_run_id?: string;
  trigger_body?: unknown;
  traceparent?: string | null;
  email_identity?: EmailIdentity | string | null;
};

/** A run's snapshot from a row selected with RUN_COLUMNS. */
export function runFromRow(row: RunRow): RunInfo & { version: number } {
  return {
    runId: row.id,
    workflowId: row.workflow_id,
    accountId: row.account_id,
    graph: row.graph as Graph,
    version: Number(row.workflow_version),
    mode: (row.mode ?? "live") as RunMode,
    trigger: (row.trigger ?? "manual") as RunTrigger,
    untilNodeId: row.until_node_id ?? null,
    ledgerRunId: row.ledger_run_id,
    triggerBody: row.trigger_body ?? undefined,
    traceparent: row.traceparent ?? null,
    emailIdentity: typeof row.email_identity === "string" ? (JSON.parse(row.email_identity) as EmailIdentity) : (row.email_identity ?? null),
  };
}
