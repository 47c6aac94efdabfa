import "server-only";
import { eq } from "drizzle-orm";
import { getDb } from "@/db/client";
import { accounts } from "@/db/schema";
import { EmailSendError } from "@/lib/email/types";
import { AppError, notFound } from "@/lib/errors";
import { randomToken } from "@/lib/crypto";
import { sanitizeProviderMessage } from "@/lib/net/provider-message";
import { findSenderRow } from "./find-sender";
import { noteSenderError, senderFromRow } from "./resolve-sender";

/**
 * POST /api/senders/:id/test — one email through the sender to the account's own address. A refusal answers 422
 * `sender_test_failed` with the provider's (sanitised) sentence and is kept as the sender's `lastError`.
 */
export async function testSender(accountId: string, senderId: string): Promise<{ messageId: string }> {
  const db = await getDb();
  const row = await findSenderRow(accountId, senderId, db);
  const [account] = await db.select({ email: accounts.email }).from(accounts).where(eq(accounts.id, accountId));
  if (!account) throw notFound("Account");
  let resolved;
  try {
    resolved = await senderFromRow(row);
    const { id } = await resolved.sender.send({
      to: account.email,
      subject: `Flowmail test email from "${row.name}"`,
      text: `This test email was sent through your sender "${row.name}" (${row.kind}, from ${row.fromAddress}). It works.`,
      kind: "workflow",
      idempotencyKey: `test.${senderId}.${randomToken(9)}`,
    });
    await noteSenderError(db, senderId, null);
    return { messageId: id };
  } catch (error) {
    if (!(error instanceof EmailSendError) && !(error instanceof Error)) throw error;
    const sentence = error instanceof EmailSendError ? error.message : `The sender could not be used: ${sanitizeProviderMessage(error)}`;
    await noteSenderError(db, senderId, sentence);
    throw new AppError("sender_test_failed", `The test email was not sent: ${sentence}`, { cause: error });
  }
}
