import "server-only";
import { inArray } from "drizzle-orm";
import { getDb } from "@/db/client";
import { mailboxMessages } from "@/db/schema";
import { getConfig } from "@/lib/config";
import { newId } from "@/lib/ids";
import type { EmailSender, OutgoingEmail, SendResult } from "./types";

type MailboxRow = typeof mailboxMessages.$inferInsert;

/**
 * The embedded transport: every email becomes a row of `mailbox_messages`, read at /mailbox and
 * GET /api/dev/mailbox. The unique idempotency key makes a repeated send return the first row.
 */
export function createMailboxSender(): EmailSender {
  return {
    name: "mailbox",
    send: async (email) => (await storeAll([email]))[0],
    sendBatch: (emails, batchIdempotencyKey) =>
      storeAll(emails.map((email, i) => withBatchKey(email, batchIdempotencyKey, i))),
  };
}

/** Emails without their own key inherit one from the batch key, so a retried batch is stored once. */
function withBatchKey(email: OutgoingEmail, batchKey: string | undefined, index: number): OutgoingEmail {
  if (email.idempotencyKey || !batchKey) return email;
  return { ...email, idempotencyKey: `${batchKey}:${index}` };
}

let lastStamp = 0;

/** Strictly increasing per process, so "newest first" keeps the sending order even within one millisecond. */
function nextStamp(): Date {
  lastStamp = Math.max(Date.now(), lastStamp + 1);
  return new Date(lastStamp);
}

async function storeAll(emails: OutgoingEmail[]): Promise<SendResult[]> {
  if (emails.length === 0) return [];
  const db = await getDb();
  const from = getConfig().emailFrom;
  const rows: MailboxRow[] = emails.map((email) => ({
    id: newId("msg"),
    from,
    to: email.to,
    subject: email.subject,
    text: email.text ?? null,
    html: email.html ?? null,
    kind: email.kind,
    idempotencyKey: email.idempotencyKey ?? null,
    headers: email.headers ?? null,
    createdAt: nextStamp(),
  }));
  await db.insert(mailboxMessages).values(rows).onConflictDoNothing({ target: mailboxMessages.idempotencyKey });
  const keys = rows.flatMap((row) => (row.idempotencyKey ? [row.idempotencyKey] : []));
  const stored = keys.length
    ? await db.select({ id: mailboxMessages.id, key: mailboxMessages.idempotencyKey }).from(mailboxMessages)
        .where(inArray(mailboxMessages.idempotencyKey, keys))
    : [];
  const idByKey = new Map(stored.map((row) => [row.key, row.id]));
  return rows.map((row) => ({ id: (row.idempotencyKey && idByKey.get(row.idempotencyKey)) || row.id }));
}
