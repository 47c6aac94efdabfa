import "server-only";
import { AppError } from "@/lib/errors";
import { enqueueDerivedRun, type DerivedRun } from "@/lib/engine";

/**
 * POST /api/workflows/runs/:runId/retry — a new run of the FAILED run's graph snapshot at the tail of the workflow's
 * queue, reusing every node that succeeded. Its OUTPUT nodes share the retry chain's send ledger, so an
 * email the chain already sent is not sent again. Retrying the same FAILED run twice is allowed (each retry only sends
 * what the chain has not sent yet).
 */
export async function retryRun(accountId: string, runId: string): Promise<DerivedRun> {
  return enqueueDerivedRun({
    accountId,
    sourceRunId: runId,
    trigger: "retry",
    reuseNode: () => true,
    check: (source) => {
      if (source.status !== "FAILED") {
        throw new AppError("run_not_failed", `Only a FAILED run can be retried; this run is ${source.status}.`);
      }
    },
  });
}
