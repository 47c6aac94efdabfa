import "server-only";
import { sql } from "drizzle-orm";
import { execRows, getDb } from "@/db/client";
import { AppError, notFound } from "@/lib/errors";
import { looksLikeId } from "@/lib/ids";
import { enqueueDerivedRun, type DerivedRun } from "@/lib/engine";

/**
 * POST /api/workflows/runs/:runId/resend-unknown — a person's explicit choice to send again the SMTP/SES emails whose
 * fate a crash left unknown (they may have been delivered). A new live run (`trigger: "resend_unknown"`, `resendOf`)
 * in the source's retry chain, so it shares its send ledger: it reuses every node except the OUTPUT nodes that have
 * unknown emails, and those reopen only their unknown emails (refused ones stay failed, sent ones sent; an address
 * suppressed meanwhile is skipped). 409 while the run is not finished, when it has no email of unknown fate, when
 * another of its nodes failed (a retry is the way to finish those), or when they were already resent.
 */
export async function resendUnknown(accountId: string, runId: string): Promise<DerivedRun> {
  if (!looksLikeId("run", runId)) throw notFound("Run");
  const db = await getDb();
  const nodes = await execRows<{ node_id: string }>(
    db,
    sql`select distinct e.node_id from runs r join email_sends e on e.run_id = coalesce(r.chain_root_id, r.id)
        where r.id = ${runId} and r.account_id = ${accountId} and e.status = 'unknown'`,
  );
  const withUnknown = new Set(nodes.map((n) => n.node_id));
  // Only the unknown emails go again: a run whose other nodes failed would run (and pay for, and send) them anew.
  const failed = await execRows<{ node_id: string }>(
    db,
    sql`select n.node_id from runs r join node_results n on n.run_id = r.id
        where r.id = ${runId} and r.account_id = ${accountId} and n.status = 'FAILED'`,
  );
  const otherFailed = failed.map((n) => n.node_id).filter((id) => !withUnknown.has(id));
  return enqueueDerivedRun({
    accountId,
    sourceRunId: runId,
    trigger: "resend_unknown",
    mode: "live",
    reuseNode: (node) => !(node.type === "OUTPUT" && withUnknown.has(node.id)),
    check: (source) => {
      if (source.status !== "SUCCESS" && source.status !== "FAILED") {
        throw new AppError("conflict", `The run is ${source.status}: wait until it has finished to resend its emails of unknown fate.`);
      }
      if (source.mode !== "live") throw new AppError("conflict", "A preview sent nothing: it has no email of unknown fate.");
      if (withUnknown.size === 0) throw new AppError("conflict", "This run has no email of unknown fate to resend.");
      if (otherFailed.length > 0) {
        throw new AppError("conflict", `Node "${otherFailed[0]}" of this run failed: retry the run first; resending sends only the emails of unknown fate.`);
      }
    },
    once: new AppError("conflict", "This run's emails of unknown fate were already resent (see the run that resends them)."),
  });
}
