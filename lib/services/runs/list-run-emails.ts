import "server-only";
import { sql } from "drizzle-orm";
import { execRows, getDb } from "@/db/client";
import type { EmailSendStatus } from "@/db/schema";
import { AppError, notFound } from "@/lib/http/errors";

const STATUSES: EmailSendStatus[] = ["pending", "sent", "suppressed", "duplicate", "failed", "preview", "sending", "unknown"];

type EmailRow = {
  item_index: number; to: string; subject: string; status: EmailSendStatus; provider_message_id: string | null;
  sent_at: string | Date | null; error: string | null; body: string | null; format: "text" | "html" | null;
};

/**
 * The emails of one OUTPUT node of a run (CONTRACT 11), from the send ledger of the run's retry chain: a page by item
 * index (optionally of one status) and the count of every status. Preview items carry their rendered body.
 */
export async function listRunEmails(
  accountId: string,
  runId: string,
  nodeId: string,
  query: { status?: EmailSendStatus; offset: number; limit: number },
) {
  const db = await getDb();
  const [run] = await execRows<{ ledger_run_id: string; is_output: boolean; outputs_expired_at: string | Date | null }>(
    db,
    sql`select coalesce(r.chain_root_id, r.id) as ledger_run_id, r.outputs_expired_at,
          exists (select 1 from jsonb_array_elements(r.graph->'nodes') as n where n->>'id' = ${nodeId} and n->>'type' = 'OUTPUT') as is_output
        from runs r where r.id = ${runId} and r.account_id = ${accountId}`,
  );
  if (!run || !run.is_output) throw notFound("OUTPUT node of this run");
  if (run.outputs_expired_at) throw new AppError("output_expired", "The per-email records of this run were deleted after RUN_OUTPUT_RETENTION_DAYS; the run's counts remain.");
  const ledger = run.ledger_run_id;
  const [countRows, rows] = await Promise.all([
    execRows<{ status: EmailSendStatus; n: number }>(
      db,
      sql`select status, count(*)::int as n from email_sends where run_id = ${ledger} and node_id = ${nodeId} group by status`,
    ),
    execRows<EmailRow>(
      db,
      sql`select item_index, "to", subject, status, provider_message_id, sent_at, error, body, format
          from email_sends where run_id = ${ledger} and node_id = ${nodeId}
          ${query.status ? sql`and status = ${query.status}` : sql``}
          order by item_index offset ${query.offset} limit ${query.limit}`,
    ),
  ]);
  const counts = Object.fromEntries(STATUSES.map((s) => [s, 0])) as Record<EmailSendStatus, number>;
  for (const row of countRows) counts[row.status] = Number(row.n);
  const total = query.status ? counts[query.status] : Object.values(counts).reduce((a, b) => a + b, 0);
  return {
    items: rows.map((row) => ({
      index: Number(row.item_index),
      to: row.to,
      subject: row.subject,
      status: row.status,
      providerMessageId: row.provider_message_id,
      sentAt: row.sent_at ? new Date(row.sent_at).toISOString() : null,
      error: row.error,
      ...(row.status === "preview" || row.body !== null ? { body: row.body ?? "", format: row.format ?? "text" } : {}),
    })),
    total,
    counts,
  };
}
