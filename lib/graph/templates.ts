// Templates: `{{ <nodeId>.<path> }}` and `{{ item.<path> }}`.
//
// Decisions where the contract is silent:
// - A path segment is any run of characters other than `.` and the code-like characters rejected below, so CSV
//   headers such as "First Name" or "e-mail" can be named (`{{ item.First Name }}`); segments of digits only
//   are array indexes. A bare root (`{{ item }}`, `{{ ai }}`) is allowed and yields the whole value.
// - `__proto__`, `constructor` and `prototype` can never be a root, `__proto__` never a segment; every lookup is
//   an own-property lookup, so `constructor`/`prototype` as a field name only finds a real column of that name.
// - A string that is exactly one template, possibly with surrounding whitespace, yields the raw value.
// - Interpolation: strings as they are, numbers and booleans with String(), arrays and objects as JSON,
//   null/undefined as "" (an empty CSV cell and a JSON null read the same in an email).
// - `\{{` is a literal `{{`; any other backslash is literal text.
// - Rendered text has a size limit (MAX_RENDERED_CHARS): `{{ big }}` of a 100,000-row upload, interpolated into
//   every email, would otherwise build tens of megabytes per item. A list or object is measured before its JSON is
//   built, so the work done for a too-large value is bounded by the limit too.
import { stringifyWithin } from "./bounded-json";
import { htmlParts, isSafeUrl, isSafeUrlList } from "./html-slots";
import { FORBIDDEN_KEYS, NODE_ID_PATTERN } from "./schema";

export class TemplateSyntaxError extends Error {
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(message);
    this.name = "TemplateSyntaxError";
  }
}

/** A run-time failure; the message is a sentence a person can act on. */
export class TemplateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TemplateError";
  }
}

export type TemplateRef = { root: string /* nodeId or "item" */; path: (string | number)[]; raw: string };

export type TemplatePart = { text: string } | { ref: TemplateRef; position: number };

export type TemplateContext = {
  /** Status (as in the run) and output of a node; undefined when the run has no such node. */
  node(nodeId: string): { status: string; output: Record<string, unknown> | null } | undefined;
  item?: unknown;
  itemIndex?: number;
  /** `{{unsubscribeUrl}}` in an OUTPUT body: the recipient's one-click unsubscribe address. */
  unsubscribeUrl?: string;
  /** The node whose data holds the template, and which field — only used to word error messages. */
  nodeId?: string;
  field?: string;
};

/** The longest text one template may render to (characters). */
export const MAX_RENDERED_CHARS = 1_000_000;

const CODE_LIKE = /[{}()[\]'"`\\;,=<>!?*+|^~]|[\u0000-\u001f\u007f]/;
const MAX_TEMPLATE_LENGTH = 1_000_000;

/** Splits a template string into literal text and references. Throws TemplateSyntaxError. */
export function parseTemplate(text: string): TemplatePart[] {
  const cached = cache.get(text);
  if (cached) return cached;
  const parts = parseUncached(text);
  if (text.length <= CACHE_MAX_TEXT) {
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(text, parts);
  }
  return parts;
}

// OUTPUT renders the same few templates once per item: parse each once. Bounded so memory stays small.
const CACHE_LIMIT = 1000;
const CACHE_MAX_TEXT = 10_000;
const cache = new Map<string, TemplatePart[]>();

function parseUncached(text: string): TemplatePart[] {
  if (text.length > MAX_TEMPLATE_LENGTH) throw new TemplateSyntaxError("Template text is too long", MAX_TEMPLATE_LENGTH);
  const parts: TemplatePart[] = [];
  let literal = "";
  let i = 0;
  while (i < text.length) {
    const open = text.indexOf("{{", i);
    if (open === -1) {
      literal += text.slice(i);
      break;
    }
    if (open > 0 && text[open - 1] === "\\") {
      literal += text.slice(i, open - 1) + "{{";
      i = open + 2;
      continue;
    }
    literal += text.slice(i, open);
    const close = text.indexOf("}}", open + 2);
    if (close === -1) throw new TemplateSyntaxError(`Unclosed "{{" at position ${open}`, open);
    if (literal) parts.push({ text: literal });
    literal = "";
    parts.push({ ref: parseRef(text.slice(open, close + 2), open), position: open });
    i = close + 2;
  }
  if (literal) parts.push({ text: literal });
  return parts;
}

function parseRef(raw: string, position: number): TemplateRef {
  const inner = raw.slice(2, -2).trim();
  const fail = (why: string) => {
    throw new TemplateSyntaxError(`Invalid template ${raw} at position ${position}: ${why}`, position);
  };
  if (!inner) fail("it names nothing; write {{nodeId.field}} or {{item.field}}");
  if (CODE_LIKE.test(inner)) fail("a reference is a node id or item followed by .field names, nothing else");
  const segments = inner.split(".").map((segment) => segment.trim());
  if (segments.some((segment) => segment === "")) fail("a path has an empty part");
  const [root, ...rest] = segments;
  if (FORBIDDEN_KEYS.includes(root) || rest.includes("__proto__")) fail(`"${FORBIDDEN_KEYS.join('", "')}" name nothing`);
  if (root !== "item" && !NODE_ID_PATTERN.test(root)) fail(`"${root}" is not a node id`);
  const path = rest.map((segment) => (/^\d{1,9}$/.test(segment) ? Number(segment) : segment));
  // Frozen: parsed templates are cached and shared between callers.
  return Object.freeze({ root, path: Object.freeze(path) as (string | number)[], raw });
}

/** Every reference in a template string, in order. Throws TemplateSyntaxError. */
export function templateRefs(text: string): TemplateRef[] {
  return parseTemplate(text).flatMap((part) => ("ref" in part ? [part.ref] : []));
}

/** True when the text is exactly one template (surrounding whitespace allowed), so it renders to a raw value. */
export function isLoneTemplate(text: string): boolean {
  const parts = parseTemplate(text);
  return loneRef(parts) !== undefined;
}

function loneRef(parts: TemplatePart[]): TemplateRef | undefined {
  let ref: TemplateRef | undefined;
  for (const part of parts) {
    if ("ref" in part) {
      if (ref) return undefined;
      ref = part.ref;
    } else if (part.text.trim() !== "") {
      return undefined;
    }
  }
  return ref;
}

/**
 * Renders a template: a lone template yields the referenced value itself (an array stays an array), anything
 * else is a string with every reference interpolated. Throws TemplateSyntaxError or TemplateError.
 */
export function renderTemplate(text: string, ctx: TemplateContext): unknown {
  const parts = parseTemplate(text);
  const lone = loneRef(parts);
  if (lone) return resolveRef(lone, ctx);
  return interpolate(parts, ctx, undefined);
}

/**
 * Renders to a string in every case. With `html: true` the literal text is the author's HTML and each value is
 * written for its place in it (html-slots.ts): escaped between tags and in attribute values, quoted in an unquoted
 * attribute, "#" for a URL attribute that would not be an http(s), mailto or tel address, refused inside a tag, an
 * on… attribute or a script. `escape`: values between tags go through this instead of HTML escaping (OUTPUT's
 * Markdown bodies, whose raw HTML is placed the same way); without `html` it applies everywhere.
 */
export function renderTemplateString(text: string, ctx: TemplateContext, opts: { html?: boolean; escape?: (value: string) => string } = {}): string {
  if (opts.html === true) return interpolateHtml(parseTemplate(text), ctx, opts.escape ?? escapeHtml);
  return interpolate(parseTemplate(text), ctx, opts.escape);
}

function interpolateHtml(parts: TemplatePart[], ctx: TemplateContext, escapeText: (value: string) => string): string {
  let out = "";
  const value = (ref: TemplateRef) => {
    const text = formatTemplateValue(resolveRef(ref, ctx), MAX_RENDERED_CHARS - out.length);
    if (text === undefined) throw tooLong(ref, ctx);
    return text;
  };
  for (const part of htmlParts(parts)) {
    if ("text" in part) out += part.text;
    else if ("ref" in part) out += escapeText(value(part.ref));
    else if ("forbidden" in part) {
      throw new TemplateError(`${where(part.forbidden.ref, ctx)} cannot be placed where it is: ${part.forbidden.why}`);
    } else {
      const { name, quoted, url, parts: inner } = part.attr;
      let raw = "";
      let written = "";
      for (const piece of inner) {
        if ("text" in piece) {
          raw += piece.text;
          written += piece.text;
        } else {
          const text = value(piece.ref);
          raw += text;
          written += escapeAttribute(text);
        }
        if (out.length + written.length > MAX_RENDERED_CHARS) throw tooLong(undefined, ctx);
      }
      if (url && !(name === "srcset" ? isSafeUrlList(raw) : isSafeUrl(raw))) written = "#";
      out += quoted ? written : `"${written}"`;
    }
    if (out.length > MAX_RENDERED_CHARS) throw tooLong("ref" in part ? part.ref : undefined, ctx);
  }
  return out;
}

/** An attribute value: HTML escaping, and line breaks as references (Markdown would end a raw tag at a blank line). */
function escapeAttribute(text: string): string {
  return escapeHtml(text).replace(/[\r\n]/g, (c) => (c === "\r" ? "&#13;" : "&#10;"));
}

function interpolate(parts: TemplatePart[], ctx: TemplateContext, escape: ((value: string) => string) | undefined): string {
  let out = "";
  for (const part of parts) {
    if ("text" in part) out += part.text;
    else {
      const value = formatTemplateValue(resolveRef(part.ref, ctx), MAX_RENDERED_CHARS - out.length);
      if (value === undefined) throw tooLong(part.ref, ctx);
      out += escape ? escape(value) : value;
    }
    if (out.length > MAX_RENDERED_CHARS) throw tooLong("ref" in part ? part.ref : undefined, ctx);
  }
  return out;
}

function tooLong(ref: TemplateRef | undefined, ctx: TemplateContext): TemplateError {
  const limit = MAX_RENDERED_CHARS.toLocaleString("en-US");
  const subject = ref ? `${where(ref, ctx)} makes the text` : `The rendered text${ctx.field ? ` of ${ctx.field}` : ""}${ctx.nodeId ? ` of node "${ctx.nodeId}"` : ""} is`;
  return new TemplateError(`${subject} longer than ${limit} characters, the limit for rendered text: name a field rather than a whole list or output`);
}

/**
 * The contract's interpolation of one value; undefined when a list or object would be longer than `limit`
 * characters as JSON (nothing that long is built). Strings, numbers and booleans are returned as they are.
 */
export function formatTemplateValue(value: unknown, limit = MAX_RENDERED_CHARS): string | undefined {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  if (typeof value === "object") return stringifyWithin(value, Math.max(0, limit));
  return String(value);
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => HTML_ENTITIES[char]);
}

const HTML_ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Resolves one reference against the run. Throws TemplateError naming the template, node and item index. */
export function resolveRef(ref: TemplateRef, ctx: TemplateContext): unknown {
  if (ref.root === "item") {
    if (!("item" in ctx) && ctx.itemIndex === undefined) {
      throw new TemplateError(`${where(ref, ctx)} uses item, which only exists per item in an OUTPUT node's to, subject and body`);
    }
    return walk(ctx.item, ref, ctx, "the item");
  }
  if (ref.root === "unsubscribeUrl" && ref.path.length === 0) {
    if (ctx.unsubscribeUrl === undefined) throw new TemplateError(`${where(ref, ctx)}: unsubscribeUrl only exists in an OUTPUT node's body`);
    return ctx.unsubscribeUrl;
  }
  const node = ctx.node(ref.root);
  if (!node) throw new TemplateError(`${where(ref, ctx)} names node "${ref.root}", which is not in this workflow`);
  if (node.status !== "SUCCESS") {
    throw new TemplateError(`${where(ref, ctx)} needs node "${ref.root}", which ${statusPhrase(node.status)} in this run`);
  }
  if (node.output === null) throw new TemplateError(`${where(ref, ctx)} needs node "${ref.root}", which has no output`);
  return walk(node.output, ref, ctx, `node "${ref.root}"'s output`);
}

function statusPhrase(status: string): string {
  switch (status) {
    case "SKIPPED":
      return "was SKIPPED (its branch was not taken or an upstream node failed)";
    case "FAILED":
      return "FAILED";
    case "PENDING":
    case "RUNNING":
      return "has not finished";
    default:
      return `is ${status}`;
  }
}

function walk(base: unknown, ref: TemplateRef, ctx: TemplateContext, baseName: string): unknown {
  let value = base;
  for (let i = 0; i < ref.path.length; i++) {
    const segment = ref.path[i];
    const next = step(value, segment);
    if (next === MISSING) {
      const at = i === 0 ? baseName : `${baseName} at ${[ref.root, ...ref.path.slice(0, i)].join(".")}`;
      throw new TemplateError(`${where(ref, ctx)}: ${describeMissing(value, segment)} in ${at}`);
    }
    value = next;
  }
  return value;
}

const MISSING = Symbol("missing");

function step(value: unknown, segment: string | number): unknown {
  if (Array.isArray(value)) {
    return typeof segment === "number" && segment < value.length ? value[segment] : MISSING;
  }
  if (value !== null && typeof value === "object") {
    const key = String(segment);
    return Object.hasOwn(value, key) ? (value as Record<string, unknown>)[key] : MISSING;
  }
  return MISSING;
}

function describeMissing(value: unknown, segment: string | number): string {
  if (Array.isArray(value)) {
    return typeof segment === "number"
      ? `index ${segment} is past the end of a list of ${value.length}`
      : `"${segment}" is not an index of a list`;
  }
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value);
    const hint = keys.length ? ` (fields: ${keys.slice(0, 10).join(", ")}${keys.length > 10 ? ", …" : ""})` : "";
    return `there is no field "${segment}"${hint}`;
  }
  return `"${segment}" cannot be read from ${value === null ? "null" : `a ${typeof value}`}`;
}

function where(ref: TemplateRef, ctx: TemplateContext): string {
  let text = `Template ${ref.raw}`;
  if (ctx.field) text += ` in ${ctx.field}`;
  if (ctx.nodeId) text += ` of node "${ctx.nodeId}"`;
  if (ctx.itemIndex !== undefined) text += ` (item ${ctx.itemIndex})`;
  return text;
}
