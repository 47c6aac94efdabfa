import "server-only";
import type { Db } from "@/db/client";
import { isConnectionLoss, isDatabaseUnavailable } from "@/db/connection-errors";
import { cancelOpenBatchesOfRun } from "@/lib/ai/batch/cancel-run";
import { enqueueRunWebhooks } from "@/lib/webhooks/enqueue-run-webhooks";
import type { EngineDeps } from "./core/execute-run";
import { pgNodePorts } from "./pg-node-ports";
import { PgRunStore } from "./pg/pg-run-store";

/**
 * The engine wired to one database: its run store (on `runStateDb`, see db/client.ts's DbHandle), the node ports (on
 * `db`: the send ledger's commits are durable), run webhooks, and the given wake-up.
 */
export function pgEngineDeps(db: Db, wake: (workflowId: string) => Promise<void>, runStateDb: Db = db): EngineDeps {
  return {
    store: new PgRunStore(runStateDb),
    ports: pgNodePorts(db),
    wake,
    isOutage: (error) => isConnectionLoss(error) || isDatabaseUnavailable(error),
    runFinished: (run, finalized) =>
      enqueueRunWebhooks({ runId: run.runId, workflowId: run.workflowId, accountId: run.accountId, status: finalized.status, result: finalized.result, error: finalized.error }),
    runCancelled: (run) => cancelOpenBatchesOfRun(db, run.accountId, run.runId),
  };
}
