import { z } from "zod";
import type { OperationSpec } from "@/lib/http/openapi";
import { EMAIL_ADDRESS } from "./email-address";

// Senders: an account's own Resend key, SMTP server or Amazon SES account for its OUTPUT nodes.

export const SENDER_KINDS = ["resend", "smtp", "ses"] as const;

const bareAddress = z.string().trim().max(254).regex(EMAIL_ADDRESS, "Not one valid email address");
/** `a@b.co` or `Name <a@b.co>`: the display name may not hold the characters that would break the header. */
const FROM = /^(?:[^<>"\r\n@,;]{1,100} <[^\s@<>(),;:"\\[\]]+@[A-Za-z0-9.-]+\.[A-Za-z0-9-]+>|[^\s@<>(),;:"\\[\]]+@[A-Za-z0-9.-]+\.[A-Za-z0-9-]+)$/;
const fromAddress = z.string().trim().max(320).regex(FROM, "Must be an email address, optionally with a display name: Name <name@example.com>");
const host = z.string().trim().min(1).max(253).regex(/^[A-Za-z0-9.-]+$|^\[[0-9A-Fa-f:.]+\]$/, "Not a host name or address");

export const resendConfig = z.strictObject({ apiKey: z.string().trim().min(8).max(200) });
export const smtpConfig = z.strictObject({
  host,
  port: z.number().int().min(1).max(65535),
  secure: z.boolean().describe("true: TLS from the first byte (port 465); false: STARTTLS, required before a password is sent unless the host is localhost or a loopback address"),
  username: z.string().max(254).optional(),
  password: z.string().max(500).optional().describe("Write-only; left out on PATCH, the stored one is kept"),
});
export const sesConfig = z.strictObject({
  region: z.string().trim().regex(/^[a-z]{2}(-[a-z]+)+-\d$/, "Not an AWS region such as eu-west-1"),
  accessKeyId: z.string().trim().regex(/^[A-Z0-9]{16,128}$/, "Not an AWS access key id"),
  secretAccessKey: z.string().trim().min(16).max(128).optional().describe("Write-only; required on create"),
  configurationSet: z.string().trim().min(1).max(64).optional(),
});

const common = {
  name: z.string().trim().min(1).max(100),
  from: fromAddress,
  replyTo: bareAddress.nullable().optional(),
  isDefault: z.boolean().optional(),
  ratePerSecond: z.number().positive().max(10_000).nullable().optional().describe("Default: Resend 5 calls/s, SMTP 10 emails/s, SES the account's MaxSendRate"),
  dailyQuota: z.number().int().min(1).max(100_000_000).nullable().optional().describe("Default: none (SES: the account's Max24HourSend)"),
  resend: resendConfig.optional(),
  smtp: smtpConfig.optional(),
  ses: sesConfig.optional(),
};

/** The config object of the sender's kind is required; another kind's is refused. */
function kindConfig(value: { kind?: string; resend?: unknown; smtp?: unknown; ses?: unknown }, ctx: z.RefinementCtx, required: boolean) {
  for (const kind of SENDER_KINDS) {
    if (value[kind] !== undefined && value.kind !== undefined && value.kind !== kind) {
      ctx.addIssue({ code: "custom", path: [kind], message: `A ${value.kind} sender takes no "${kind}" settings` });
    }
  }
  if (required && value.kind && value[value.kind as (typeof SENDER_KINDS)[number]] === undefined) {
    ctx.addIssue({ code: "custom", path: [value.kind], message: `The "${value.kind}" settings are required for a ${value.kind} sender` });
  }
}

export const createSenderBody = z
  .strictObject({ kind: z.enum(SENDER_KINDS), ...common })
  .superRefine((value, ctx) => {
    kindConfig(value, ctx, true);
    if (value.kind === "ses" && value.ses && !value.ses.secretAccessKey) {
      ctx.addIssue({ code: "custom", path: ["ses", "secretAccessKey"], message: "Required" });
    }
  });

export const updateSenderBody = z
  .strictObject({ kind: z.enum(SENDER_KINDS).optional(), ...common, name: common.name.optional(), from: fromAddress.optional() })
  .superRefine((value, ctx) => kindConfig(value, ctx, false));

export const senderIdParams = z.object({ senderId: z.string().min(1).max(64) });

export const senderResponse = z.object({
  id: z.string(),
  kind: z.enum(SENDER_KINDS),
  name: z.string(),
  from: z.string(),
  replyTo: z.string().nullable(),
  isDefault: z.boolean(),
  ratePerSecond: z.number().nullable().describe("null: the kind's default"),
  dailyQuota: z.number().int().nullable(),
  lastError: z.string().nullable().describe("The last refusal of a test email or a send (null after a success)"),
  createdAt: z.string(),
  resend: z.object({ keyLast4: z.string() }).optional(),
  smtp: z.object({ host: z.string(), port: z.number().int(), secure: z.boolean(), username: z.string().nullable(), passwordLast4: z.string().nullable() }).optional(),
  ses: z.object({ region: z.string(), accessKeyId: z.string(), configurationSet: z.string().nullable(), secretLast4: z.string() }).optional(),
});
export const sendersResponse = z.object({ items: z.array(senderResponse) });
export const testSenderResponse = z.object({ messageId: z.string() });

export type SenderView = z.infer<typeof senderResponse>;
export type CreateSenderInput = z.infer<typeof createSenderBody>;
export type UpdateSenderInput = z.infer<typeof updateSenderBody>;

const tag = "Senders";

export const senderOperations: OperationSpec[] = [
  {
    method: "get", path: "/api/senders", operationId: "listSenders", tag, auth: true, scope: "senders:read",
    summary: "The account's senders (secrets never returned: their last 4 characters only)",
    responses: { 200: { description: "Every sender of the account, oldest first", schema: sendersResponse } },
  },
  {
    method: "post", path: "/api/senders", operationId: "createSender", tag, auth: true, scope: "person",
    summary: "Add a sender: an own Resend key, SMTP server or Amazon SES account (its settings object is required)",
    body: createSenderBody,
    responses: { 201: { description: "The sender", schema: senderResponse } },
    errors: ["validation_failed"],
  },
  {
    method: "patch", path: "/api/senders/:senderId", operationId: "updateSender", tag, auth: true, scope: "person",
    summary: "Change a sender (a secret left out keeps the stored one; isDefault: true makes it the account's default)",
    body: updateSenderBody,
    responses: { 200: { description: "The sender", schema: senderResponse } },
    errors: ["not_found", "validation_failed"],
  },
  {
    method: "delete", path: "/api/senders/:senderId", operationId: "deleteSender", tag, auth: true, scope: "person",
    summary: "Delete a sender; 409 sender_in_use (naming the workflows) while an OUTPUT node names it",
    responses: { 204: { description: "Deleted" } },
    errors: ["not_found", "sender_in_use"],
  },
  {
    method: "post", path: "/api/senders/:senderId/test", operationId: "testSender", tag, auth: true, scope: "person",
    summary: "Send one test email through the sender to the account's own address",
    responses: { 200: { description: "Sent", schema: testSenderResponse } },
    errors: ["not_found", "sender_test_failed"],
  },
  {
    method: "post", path: "/api/workflows/runs/:runId/resend-unknown", operationId: "resendUnknown", tag: "Sending", auth: true, scope: "runs:write",
    summary: "Send again exactly the SMTP/SES emails of a finished run whose fate a crash left unknown (they may have been delivered): a new live run; 409 when there are none or they were already resent",
    responses: {
      202: {
        description: "The live run, enqueued",
        schema: z.object({ runId: z.string(), workflowId: z.string(), status: z.literal("PENDING"), enqueuedAt: z.string(), resendOf: z.string() }),
        headers: ["Location"],
      },
    },
    errors: ["not_found", "conflict"],
  },
  {
    method: "post", path: "/api/integrations/ses/events/:senderId", operationId: "sesEvents", tag: "Sending", auth: false,
    summary: "An SES sender's bounces and complaints through Amazon SNS (signature verified; the subscription is confirmed): permanent bounces and complaints suppress the address for the sender's account",
    responses: { 200: { description: "Accepted", schema: z.object({ handled: z.boolean() }) } },
    errors: ["invalid_token", "forbidden", "not_found"],
  },
];
