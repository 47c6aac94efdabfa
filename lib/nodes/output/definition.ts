// OUTPUT's client-safe half: one email per element of a list.
import { defineNode, nonEmpty, text, type Zod } from "../node-definition";

export const EMAIL_FORMATS = ["text", "html", "markdown"] as const;

export const buildOutputDataSchema = (zod: Zod) =>
  zod.strictObject({
    forEach: nonEmpty(zod, "forEach"),
    to: nonEmpty(zod, "to"),
    subject: nonEmpty(zod, "subject"),
    body: zod.string(),
    format: zod.enum(EMAIL_FORMATS).optional(),
    /** false: send to every item, repeated addresses included. */
    dedupe: zod.boolean().optional(),
    /** false: transactional mail, without List-Unsubscribe headers. */
    unsubscribe: zod.boolean().optional(),
    /** The account's sender (`snd_…`); else its default sender, else the deployment's transport. */
    senderId: zod.string().min(1).max(64).optional(),
    /** Reply-To, rendered per item like `to`. */
    replyTo: zod.string().max(320).optional(),
  });

export const outputDefinition = defineNode({
  type: "OUTPUT",
  dataSchema: buildOutputDataSchema,
  label: "Send emails",
  description: "Send one email per item",
  docs: "Sends one email per element of `forEach`, with `to`, `subject` and `body` rendered for that element. Output: { emailsSent }.",
  idPrefix: "output",
  accent: "bg-emerald-100 text-emerald-700",
  defaultData: () => ({ forEach: "", to: "{{item.email}}", subject: "", body: "", format: "text" }),
  outputFields: () => ["emailsSent"],
  hasInput: true,
  summary: (data) => (data.subject ? `“${text(data.subject)}”` : "Compose the email"),
  form: [
    { name: "forEach", label: "For each", kind: "template", template: "lone", placeholder: "{{filter_1.items}}", help: "One email per element of this array." },
    { name: "to", label: "To", kind: "template", template: "item", placeholder: "{{item.email}}" },
    { name: "subject", label: "Subject", kind: "template", template: "item" },
    { name: "body", label: "Body", kind: "template", template: "item", multiline: true, rows: 6 },
    { name: "senderId", label: "Send through", kind: "sender-picker", optional: true },
    { name: "replyTo", label: "Reply-To", kind: "template", template: "item", optional: true, placeholder: "{{item.owner}}", help: "Optional; the sender's Reply-To otherwise." },
    {
      name: "format",
      label: "Format",
      kind: "select",
      optional: true,
      options: [
        { value: "text", label: "Plain text" },
        { value: "html", label: "HTML (values are escaped)" },
        { value: "markdown", label: "Markdown (values are escaped)" },
      ],
    },
  ],
});
