import "server-only";
import { renderTemplate, renderTemplateString, TemplateError } from "@/lib/graph/templates";
import { EMAIL_ADDRESS, normalizeEmail } from "@/lib/schemas/email-address";
import { unsubscribeUrl } from "@/lib/email/unsubscribe-token";
import { sliceClock } from "@/lib/slices";
import { describe } from "../filter/execute";
import { NodeError, type NodeOf, type NodeRuntime } from "../types";
import { escapeMarkdownValue, markdownToHtml } from "./markdown";

export type RenderedEmail = {
  itemIndex: number;
  to: string;
  subject: string;
  text?: string;
  html?: string;
  unsubscribeUrl?: string;
  replyTo?: string;
  /** The body was rendered and checked but not kept (renderAllEmails' memory budget): render it again to send it. */
  bodyDropped?: true;
};

/** The longest subject: a header line may have 998 characters (RFC 5322). */
const MAX_SUBJECT_CHARS = 998;
/** The largest body of one email, in UTF-8 bytes: mail clients clip far smaller messages (Gmail past 102 KB). */
export const MAX_BODY_BYTES = 256 * 1024;
/**
 * The rendered bodies one OUTPUT node holds in memory between its steps. A live send renders the rest again batch
 * by batch; a preview, which stores every body, fails past it (a preview is for checking, and skips the quota).
 */
export const MAX_HELD_BODY_BYTES = 32 * 1024 * 1024;

const kib = (bytes: number) => `${Math.ceil(bytes / 1024).toLocaleString("en-US")} KiB`;

type OutputData = {
  forEach: string;
  to: string;
  subject: string;
  body: string;
  format?: "text" | "html" | "markdown";
  dedupe?: boolean;
  unsubscribe?: boolean;
  /** The account's sender to send through (else its default sender, else the deployment's transport). */
  senderId?: string;
  /** Reply-To, rendered per item (else the sender's). */
  replyTo?: string;
};

export function outputData(node: NodeOf<"OUTPUT">): OutputData {
  return node.data as OutputData;
}

/** The elements of `forEach`: must be a list. */
export function forEachItems(node: NodeOf<"OUTPUT">, rt: NodeRuntime): unknown[] {
  const { forEach } = outputData(node);
  let value: unknown;
  try {
    value = renderTemplate(forEach, rt.templateContext("forEach"));
  } catch (error) {
    if (error instanceof TemplateError) throw new NodeError(`forEach "${forEach}" cannot be read: ${error.message}. No email was sent.`, { cause: error });
    throw error;
  }
  if (!Array.isArray(value)) {
    throw new NodeError(`forEach "${forEach}" is not a list (it is ${describe(value)}): point it at an array such as {{f.items}}. No email was sent.`);
  }
  return value;
}

/**
 * Renders one email; returns a sentence describing the problem instead when it cannot be sent as is. `to` comes out
 * normalised (trimmed, lower-cased). Unless the node is transactional (`unsubscribe: false`) the email
 * carries its one-click unsubscribe address, which `{{unsubscribeUrl}}` in the body also names. `headerUrl: false`:
 * the address (an HMAC) is computed only when the body names it; the sender adds it to the email before sending.
 */
export function renderEmail(node: NodeOf<"OUTPUT">, rt: NodeRuntime, item: unknown, itemIndex: number, options: { headerUrl?: boolean } = {}): RenderedEmail | string {
  return emailRenderer(node, rt, options)(item, itemIndex);
}

/**
 * renderEmail for many items of one node: what depends only on the node is worked out once, and one template context
 * is reused (its item, index and field set before each template; rendering reads it synchronously and keeps nothing).
 * 40,000 emails (bench/render-emails.ts): 155–245 ms → 43–98 ms; a context object per template (three per email,
 * each a spread with its closure) was most of the time.
 */
export function emailRenderer(node: NodeOf<"OUTPUT">, rt: NodeRuntime, options: { headerUrl?: boolean } = {}): (item: unknown, itemIndex: number) => RenderedEmail | string {
  const data = outputData(node);
  const markdown = data.format === "markdown";
  const html = data.format === "html" || markdown;
  const withUnsubscribe = data.unsubscribe !== false;
  const urlAlways = withUnsubscribe && options.headerUrl !== false;
  const urlInBody = usesUnsubscribeUrl(data.body);
  const ctx = rt.templateContext("to", { value: undefined, index: 0 });
  return (item, itemIndex) => {
    ctx.item = item;
    ctx.itemIndex = itemIndex;
    ctx.unsubscribeUrl = undefined;
    let to: string, subject: string, body: string;
    let unsubscribe: string | undefined;
    let replyTo: string | undefined;
    try {
      ctx.field = "to";
      to = renderTemplateString(data.to, ctx, { html: false });
      ctx.field = "subject";
      subject = renderTemplateString(data.subject, ctx, { html: false });
      if (LINE_BREAK.test(to) || LINE_BREAK.test(subject)) {
        return `item ${itemIndex}: the rendered "to" or "subject" contains a line break or a control character, which would let data inject email headers`;
      }
      to = normalizeEmail(to);
      if (!EMAIL_ADDRESS.test(to)) {
        return `item ${itemIndex}: "to" rendered as ${JSON.stringify(to.slice(0, 80))}, which is not one valid email address`;
      }
      if (data.replyTo) {
        ctx.field = "replyTo";
        replyTo = renderTemplateString(data.replyTo, ctx, { html: false }).trim();
        if (replyTo === "") replyTo = undefined;
        else if (!EMAIL_ADDRESS.test(replyTo)) {
          return `item ${itemIndex}: "replyTo" rendered as ${JSON.stringify(replyTo.slice(0, 80))}, which is not one valid email address`;
        }
      }
      if (urlAlways || urlInBody) unsubscribe = unsubscribeUrl(rt.accountId, to, rt.emailIdentity?.appUrl);
      ctx.field = "body";
      ctx.unsubscribeUrl = unsubscribe;
      body = markdown ? markdownToHtml(renderTemplateString(data.body, ctx, { html: true, escape: escapeMarkdownValue })) : renderTemplateString(data.body, ctx, { html });
      if (subject.length > MAX_SUBJECT_CHARS) {
        return `item ${itemIndex}: the subject has ${subject.length.toLocaleString("en-US")} characters, more than ${MAX_SUBJECT_CHARS}, the limit for one subject`;
      }
      const bytes = body.length > MAX_BODY_BYTES / 3 ? Buffer.byteLength(body, "utf8") : body.length;
      if (bytes > MAX_BODY_BYTES) {
        return `item ${itemIndex}: the body is ${kib(bytes)}, more than ${kib(MAX_BODY_BYTES)}, the limit for one email's body`;
      }
    } catch (error) {
      if (error instanceof TemplateError) return error.message;
      throw error;
    }
    const email: RenderedEmail = html ? { itemIndex, to, subject, html: body } : { itemIndex, to, subject, text: body };
    if (withUnsubscribe) email.unsubscribeUrl = unsubscribe;
    if (replyTo) email.replyTo = replyTo;
    return email;
  };
}

// Anything a mail system or client may take for the end of a header line: CR, LF, VT, FF, NEL, U+2028/2029 and the
// other C0/C1 control characters (a tab is allowed).
const LINE_BREAK = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u2028\u2029]/;
const usesUnsubscribeUrl = (body: string) => /\{\{\s*unsubscribeUrl\s*\}\}/.test(body);

/** RFC 8058 one-click unsubscribe headers. */
export function unsubscribeHeaders(url: string | undefined): Record<string, string> | undefined {
  if (!url) return undefined;
  return { "List-Unsubscribe": `<${url}>`, "List-Unsubscribe-Post": "List-Unsubscribe=One-Click" };
}

/**
 * Renders every email (so nothing is sent when any of them is malformed); throws the first few problems.
 */
export async function renderAllEmails(
  node: NodeOf<"OUTPUT">,
  rt: NodeRuntime,
  items: unknown[],
  options: { headerUrl?: boolean } = {},
): Promise<RenderedEmail[]> {
  const problems: string[] = [];
  const emails: RenderedEmail[] = [];
  let count = 0;
  let held = 0;
  const render = emailRenderer(node, rt, options);
  // One email may be hundreds of kilobytes to render: the time is read after each.
  const clock = sliceClock({ everyCall: true });
  for (let i = 0; i < items.length; i++) {
    // 40,000 emails render in ~50–100 ms of CPU: the event loop is given back between slices.
    if (clock.due()) await clock.yield();
    const result = render(items[i], i);
    if (typeof result === "string") {
      count++;
      if (problems.length < 3) problems.push(result);
    } else {
      held += (result.html ?? result.text ?? "").length;
      if (held > MAX_HELD_BODY_BYTES) {
        if (rt.mode === "preview") {
          throw new NodeError(
            `The previewed emails' bodies come to more than ${MAX_HELD_BODY_BYTES / 1024 / 1024} MiB together (at item ${i}), the limit for one preview: preview fewer items or shorter emails. No email was sent.`,
          );
        }
        result.text = result.html = undefined;
        result.bodyDropped = true;
      }
      emails.push(result);
    }
  }
  if (count === 0) return emails;
  const more = count > problems.length ? ` (and ${count - problems.length} more)` : "";
  throw new NodeError(
    `${count} of ${items.length} emails could not be rendered, so none was sent: ${problems.join("; ")}${more}.`,
  );
}

/** Kept for callers that only need the recipients. */
export async function validateAllEmails(node: NodeOf<"OUTPUT">, rt: NodeRuntime, items: unknown[]): Promise<{ itemIndex: number; to: string; subject: string }[]> {
  return (await renderAllEmails(node, rt, items)).map((e) => ({ itemIndex: e.itemIndex, to: e.to, subject: e.subject }));
}
