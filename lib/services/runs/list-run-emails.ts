import "server-only";
import { sql } from "drizzle-orm";
import { execRows, getDb, type Db } from "@/db/client";
import type { EmailSendStatus } from "@/db/schema";
import { AppError, notFound } from "@/lib/errors";

const STATUSES: EmailSendStatus[] = ["pending", "sent", "suppressed", "duplicate", "failed", "preview", "sending", "unknown"];

type EmailRow = {
  item_index: number; to: string; subject: string; status: EmailSendStatus; provider_message_id: string | null;
  sent_at: string | Date | null; error: string | null; body: string | null; format: "text" | "html" | null; size: number;
};

/** Rows are read in chunks that grow (50, 200, 800…): a page of large bodies stops after its first chunk. */
const FIRST_CHUNK_ROWS = 50;

/**
 * One page's rows within MAX_EMAILS_PAGE_BYTES. Each chunk's rows are sized in the database first (octet_length
 * reads no body into this process) and only those within the bytes left are read whole; the page ends at the first
 * chunk cut short (by bytes, or by the end of the rows). The first row is always read.
 */
async function pageRows(db: Db, ledger: string, nodeId: string, query: { status?: EmailSendStatus; offset: number; limit: number }): Promise<EmailRow[]> {
  const rows: EmailRow[] = [];
  let left = MAX_EMAILS_PAGE_BYTES;
  let chunk = FIRST_CHUNK_ROWS;
  while (rows.length < query.limit) {
    const take = Math.min(chunk, query.limit - rows.length);
    const got = await execRows<EmailRow>(
      db,
      sql`with page as (
            select item_index, octet_length("to") + octet_length(subject) + coalesce(octet_length(error), 0)
                     + coalesce(octet_length(body), 0) + ${ROW_OVERHEAD_BYTES} as size
            from email_sends where run_id = ${ledger} and node_id = ${nodeId}
            ${query.status ? sql`and status = ${query.status}` : sql``}
            order by item_index offset ${query.offset + rows.length} limit ${take}
          ), sized as (
            select item_index, size, sum(size) over (order by item_index) as running from page
          )
          select e.item_index, e."to", e.subject, e.status, e.provider_message_id, e.sent_at, e.error, e.body, e.format, s.size::int as size
          from sized s join email_sends e on e.run_id = ${ledger} and e.node_id = ${nodeId} and e.item_index = s.item_index
          where s.running <= ${left} or (${rows.length === 0} and s.running = s.size)
          order by e.item_index`,
    );
    rows.push(...got);
    left -= got.reduce((sum, row) => sum + Number(row.size), 0);
    if (got.length < take) break;
    chunk *= 4;
  }
  return rows;
}

/**
 * The most one page carries (subjects, errors and preview bodies, in bytes): a preview body may be 256 KiB, and a
 * page of 1,000 of them would be built whole in memory for each request. A page stops before the row that would pass
 * the limit (it always has its first row); `nextOffset` says where the next page starts.
 */
export const MAX_EMAILS_PAGE_BYTES = 4 * 1024 * 1024;
/** What a row costs beyond its texts (its other fields and JSON punctuation), in bytes. */
const ROW_OVERHEAD_BYTES = 200;

/**
 * The emails of one OUTPUT node of a run, from the send ledger of the run's retry chain: a page by item
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
    pageRows(db, ledger, nodeId, query),
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
    // Where the next page starts (fewer than `limit` items came back when the page reached its byte limit).
    nextOffset: query.offset + rows.length < total ? query.offset + rows.length : null,
  };
}
