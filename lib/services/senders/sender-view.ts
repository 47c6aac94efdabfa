import "server-only";
import type { senders } from "@/db/schema";
import type { SenderView } from "@/lib/schemas/senders";

export type SenderRow = typeof senders.$inferSelect;

/** What a client sees of a sender: never a secret, only its last 4 characters. */
export function senderView(row: SenderRow): SenderView {
  const view: SenderView = {
    id: row.id,
    kind: row.kind,
    name: row.name,
    from: row.fromAddress,
    replyTo: row.replyTo,
    isDefault: row.isDefault,
    ratePerSecond: row.ratePerSecond,
    dailyQuota: row.dailyQuota,
    lastError: row.lastError,
    createdAt: row.createdAt.toISOString(),
  };
  const last4 = row.secretLast4 ?? "";
  if (row.kind === "resend") view.resend = { keyLast4: last4 };
  const { smtp, ses } = row.settings;
  if (row.kind === "smtp" && smtp) {
    view.smtp = { host: smtp.host, port: smtp.port, secure: smtp.secure, username: smtp.username ?? null, passwordLast4: row.secretEncrypted ? last4 : null };
  }
  if (row.kind === "ses" && ses) {
    view.ses = { region: ses.region, accessKeyId: ses.accessKeyId, configurationSet: ses.configurationSet ?? null, secretLast4: last4 };
  }
  return view;
}
