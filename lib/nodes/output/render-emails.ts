import "server-only";
import { renderTemplate, renderTemplateString, TemplateError } from "@/lib/graph/templates";
import { EMAIL_ADDRESS, normalizeEmail } from "@/lib/schemas/email-address";
import { unsubscribeUrl } from "@/lib/email/unsubscribe-token";
import { describe } from "../filter/execute";
import { NodeError, type NodeOf, type NodeRuntime } from "../types";

export type RenderedEmail = { itemIndex: number; to: string; subject: string; text?: string; html?: string; unsubscribeUrl?: string };

type OutputData = {
  forEach: string;
  to: string;
  subject: string;
  body: string;
  format?: "text" | "html";
  dedupe?: boolean;
  unsubscribe?: boolean;
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
 * normalised (trimmed, lower-cased: CONTRACT 11). Unless the node is transactional (`unsubscribe: false`) the email
 * carries its one-click unsubscribe address, which `{{unsubscribeUrl}}` in the body also names. `headerUrl: false`:
 * the address (an HMAC) is computed only when the body names it; the sender adds it to the email before sending.
 */
export function renderEmail(node: NodeOf<"OUTPUT">, rt: NodeRuntime, item: unknown, itemIndex: number, options: { headerUrl?: boolean } = {}): RenderedEmail | string {
  const data = outputData(node);
  const html = data.format === "html";
  const ctx = (field: string) => rt.templateContext(field, { value: item, index: itemIndex });
  let to: string, subject: string, body: string;
  let unsubscribe: string | undefined;
  try {
    to = renderTemplateString(data.to, ctx("to"), { html: false });
    subject = renderTemplateString(data.subject, ctx("subject"), { html: false });
    if (/[\r\n]/.test(to) || /[\r\n]/.test(subject)) {
      return `item ${itemIndex}: the rendered "to" or "subject" contains a line break, which would let data inject email headers`;
    }
    to = normalizeEmail(to);
    if (!EMAIL_ADDRESS.test(to)) {
      return `item ${itemIndex}: "to" rendered as ${JSON.stringify(to.slice(0, 80))}, which is not one valid email address`;
    }
    if ((data.unsubscribe !== false && options.headerUrl !== false) || usesUnsubscribeUrl(data.body)) unsubscribe = unsubscribeUrl(rt.accountId, to);
    body = renderTemplateString(data.body, { ...ctx("body"), unsubscribeUrl: unsubscribe }, { html });
  } catch (error) {
    if (error instanceof TemplateError) return error.message;
    throw error;
  }
  const email: RenderedEmail = html ? { itemIndex, to, subject, html: body } : { itemIndex, to, subject, text: body };
  if (data.unsubscribe !== false) email.unsubscribeUrl = unsubscribe;
  return email;
}

const usesUnsubscribeUrl = (body: string) => /\{\{\s*unsubscribeUrl\s*\}\}/.test(body);

/** RFC 8058 one-click unsubscribe headers. */
export function unsubscribeHeaders(url: string | undefined): Record<string, string> | undefined {
  if (!url) return undefined;
  return { "List-Unsubscribe": `<${url}>`, "List-Unsubscribe-Post": "List-Unsubscribe=One-Click" };
}

const RENDER_SLICE = 2000;

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
  for (let i = 0; i < items.length; i++) {
    // 40,000 emails render in ~0.3 s of CPU: hand the event loop back every slice so that requests are not held.
    if (i > 0 && i % RENDER_SLICE === 0) await new Promise<void>((resolve) => setImmediate(resolve));
    const result = renderEmail(node, rt, items[i], i, options);
    if (typeof result === "string") {
      count++;
      if (problems.length < 3) problems.push(result);
    } else {
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
