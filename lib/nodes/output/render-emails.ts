import "server-only";
import { renderTemplate, renderTemplateString, TemplateError } from "@/lib/graph/templates";
import { describe } from "../filter/execute";
import { NodeError, type NodeOf, type NodeRuntime } from "../types";

export type RenderedEmail = { itemIndex: number; to: string; subject: string; text?: string; html?: string };

type OutputData = { forEach: string; to: string; subject: string; body: string; format?: "text" | "html" };

// One address, no display name, no list: what a person means by "the recipient of this email".
const EMAIL_ADDRESS = /^[^\s@<>(),;:"\\[\]]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/;

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

/** Renders one email; returns a sentence describing the problem instead when it cannot be sent as is. */
export function renderEmail(node: NodeOf<"OUTPUT">, rt: NodeRuntime, item: unknown, itemIndex: number): RenderedEmail | string {
  const data = outputData(node);
  const html = data.format === "html";
  const ctx = (field: string) => rt.templateContext(field, { value: item, index: itemIndex });
  let to: string, subject: string, body: string;
  try {
    to = renderTemplateString(data.to, ctx("to"), { html: false });
    subject = renderTemplateString(data.subject, ctx("subject"), { html: false });
    body = renderTemplateString(data.body, ctx("body"), { html });
  } catch (error) {
    if (error instanceof TemplateError) return error.message;
    throw error;
  }
  if (/[\r\n]/.test(to) || /[\r\n]/.test(subject)) {
    return `item ${itemIndex}: the rendered "to" or "subject" contains a line break, which would let data inject email headers`;
  }
  to = to.trim();
  if (!EMAIL_ADDRESS.test(to)) {
    return `item ${itemIndex}: "to" rendered as ${JSON.stringify(to.slice(0, 80))}, which is not one valid email address`;
  }
  return html ? { itemIndex, to, subject, html: body } : { itemIndex, to, subject, text: body };
}

/**
 * Renders every email (so nothing is sent when any of them is malformed); throws the first few problems.
 * Returns the recipients and subjects, for the send ledger.
 */
export function validateAllEmails(node: NodeOf<"OUTPUT">, rt: NodeRuntime, items: unknown[]): { itemIndex: number; to: string; subject: string }[] {
  const problems: string[] = [];
  const recipients: { itemIndex: number; to: string; subject: string }[] = [];
  let count = 0;
  for (let i = 0; i < items.length; i++) {
    const result = renderEmail(node, rt, items[i], i);
    if (typeof result === "string") {
      count++;
      if (problems.length < 3) problems.push(result);
    } else {
      recipients.push({ itemIndex: i, to: result.to, subject: result.subject });
    }
  }
  if (count === 0) return recipients;
  const more = count > problems.length ? ` (and ${count - problems.length} more)` : "";
  throw new NodeError(
    `${count} of ${items.length} emails could not be rendered, so none was sent: ${problems.join("; ")}${more}.`,
  );
}
