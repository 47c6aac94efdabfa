import type { BatchResult, EmailSender, OutgoingEmail, SendResult } from "./types";

/** The batch methods of a transport without batches (SMTP, SES): one call per email, in order. */
export function oneCallPerEmail(send: (email: OutgoingEmail) => Promise<SendResult>): Pick<EmailSender, "sendBatch" | "sendBatchDetailed"> {
  const sendBatch = async (emails: OutgoingEmail[]): Promise<SendResult[]> => {
    const results: SendResult[] = [];
    for (const email of emails) results.push(await send(email));
    return results;
  };
  return { sendBatch, sendBatchDetailed: async (emails): Promise<BatchResult> => ({ results: await sendBatch(emails) }) };
}
