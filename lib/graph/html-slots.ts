// Where a value lands in an HTML (or Markdown) body, and how it is written there.
//
// The author's HTML is trusted; the values put into it (a CSV cell, an AI answer) are not. Escaping `& < > " '`
// keeps a value between tags from adding markup, but not everywhere:
// - in a URL attribute (`href="{{item.url}}"`) an escaped `javascript:alert(1)` is still a script URL;
// - in an unquoted attribute (`<a href={{item.url}}>`) a space or `>` in the value ends it and adds attributes;
// - inside a tag outside any value (`<a {{item.x}}>`), in an event handler (`onclick="…"`) or in a <script>/<style>
//   element, data becomes attributes or code whatever it is escaped to.
// So the literal text of the body is read once (as an HTML tokenizer would) to find each value's place:
// - between tags: escaped;
// - in an attribute value: escaped; an unquoted value holding data is written in double quotes;
// - in a URL attribute (href, src, action, …) holding data: the whole value, the author's text and the data
//   together, is checked once rendered — character references decoded, whitespace and control characters removed —
//   and only http:, https:, mailto:, tel: or no scheme at all (a relative address) pass; anything else (javascript:,
//   data:, vbscript:, …) is replaced by "#";
// - anywhere else in a tag, in an on… attribute, srcdoc, or in <script>/<style>: the email is not rendered, with
//   a sentence naming the template.
import type { TemplatePart, TemplateRef } from "./templates";

export type HtmlPart =
  | { text: string }
  | { ref: TemplateRef }
  | { attr: { name: string; quoted: boolean; url: boolean; parts: ({ text: string } | { ref: TemplateRef })[] } }
  | { forbidden: { ref: TemplateRef; why: string } };

const URL_ATTRIBUTES = new Set([
  "href",
  "src",
  "action",
  "formaction",
  "background",
  "poster",
  "cite",
  "longdesc",
  "lowsrc",
  "dynsrc",
  "codebase",
  "data",
  "manifest",
  "ping",
  "usemap",
  "srcset",
  "xlink:href",
  "xml:base",
]);

const SAFE_SCHEMES = new Set(["http", "https", "mailto", "tel"]);

type State = "text" | "tagName" | "endTag" | "inTag" | "attrName" | "afterAttrName" | "beforeValue" | "dq" | "sq" | "unquoted" | "comment" | "raw";

// Keyed by the parsed template (parseTemplate shares one per text): a body is read once, not once per email, and
// nothing is kept after its parse is dropped.
const cache = new WeakMap<TemplatePart[], HtmlPart[]>();

/** The parts of a parsed template with each value's place in the HTML worked out (cached per parsed template). */
export function htmlParts(parts: TemplatePart[]): HtmlPart[] {
  const cached = cache.get(parts);
  if (cached) return cached;
  const result = compile(parts);
  cache.set(parts, result);
  return result;
}

function compile(parts: TemplatePart[]): HtmlPart[] {
  const out: HtmlPart[] = [];
  let state: State = "text";
  let buffer = "";
  let tagName = "";
  let attrName = "";
  let rawEnd = "";
  let capture: { name: string; quoted: boolean; url: boolean; parts: ({ text: string } | { ref: TemplateRef })[]; hasRef: boolean } | undefined;

  const flush = () => {
    if (buffer) out.push({ text: buffer });
    buffer = "";
  };
  const startValue = (quoted: boolean) => {
    flush();
    const name = attrName.toLowerCase();
    capture = { name, quoted, url: URL_ATTRIBUTES.has(name), parts: [], hasRef: false };
  };
  const endValue = () => {
    if (!capture) return;
    if (buffer) capture.parts.push({ text: buffer });
    buffer = "";
    if (capture.hasRef) out.push({ attr: { name: capture.name, quoted: capture.quoted, url: capture.url, parts: capture.parts } });
    else {
      const text = capture.parts.map((part) => ("text" in part ? part.text : "")).join("");
      if (text) out.push({ text });
    }
    capture = undefined;
  };

  for (const part of parts) {
    if ("ref" in part) {
      const ref = part.ref;
      if (state === "beforeValue") {
        state = "unquoted";
        startValue(false);
      }
      if (state === "text" || state === "comment") {
        flush();
        out.push({ ref });
      } else if ((state === "dq" || state === "sq" || state === "unquoted") && capture) {
        const name = capture.name;
        if (name.startsWith("on") || name === "srcdoc") {
          flush();
          out.push({ forbidden: { ref, why: `it stands in the ${name} attribute, whose value is code or a document` } });
          continue;
        }
        if (buffer) capture.parts.push({ text: buffer });
        buffer = "";
        capture.parts.push({ ref });
        capture.hasRef = true;
      } else if (state === "raw") {
        flush();
        out.push({ forbidden: { ref, why: `it stands inside a <${tagName}> element, whose content is code` } });
      } else {
        flush();
        out.push({ forbidden: { ref, why: "it stands inside an HTML tag outside any attribute value, where data could add attributes; put it between tags or in a quoted attribute value" } });
      }
      continue;
    }
    const text = part.text;
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      switch (state) {
        case "text":
          if (c === "<") {
            if (text.startsWith("<!--", i)) {
              state = "comment";
            } else if (/[a-zA-Z]/.test(text[i + 1] ?? "")) {
              state = "tagName";
              tagName = "";
            } else if (text[i + 1] === "/" && /[a-zA-Z]/.test(text[i + 2] ?? "")) {
              state = "endTag";
            }
          }
          buffer += c;
          break;
        case "comment":
          buffer += c;
          if (c === ">" && buffer.endsWith("-->")) state = "text";
          break;
        case "raw":
          buffer += c;
          if (c === "<" && text.slice(i, i + rawEnd.length).toLowerCase() === rawEnd) {
            state = "endTag";
          }
          break;
        case "endTag":
          buffer += c;
          if (c === ">") state = "text";
          break;
        case "tagName":
          buffer += c;
          if (/\s/.test(c)) state = "inTag";
          else if (c === ">") state = enterContent(tagName);
          else if (c !== "/") tagName += c.toLowerCase();
          break;
        case "inTag":
          buffer += c;
          if (c === ">") state = enterContent(tagName);
          else if (!/[\s/]/.test(c)) {
            state = "attrName";
            attrName = c;
          }
          break;
        case "attrName":
          buffer += c;
          if (c === "=") state = "beforeValue";
          else if (/\s/.test(c)) state = "afterAttrName";
          else if (c === ">") state = enterContent(tagName);
          else if (c === "/") state = "inTag";
          else attrName += c;
          break;
        case "afterAttrName":
          buffer += c;
          if (c === "=") state = "beforeValue";
          else if (c === ">") state = enterContent(tagName);
          else if (!/[\s/]/.test(c)) {
            state = "attrName";
            attrName = c;
          }
          break;
        case "beforeValue":
          if (/\s/.test(c)) buffer += c;
          else if (c === '"' || c === "'") {
            buffer += c;
            state = c === '"' ? "dq" : "sq";
            startValue(true);
          } else if (c === ">") {
            buffer += c;
            state = enterContent(tagName);
          } else {
            state = "unquoted";
            startValue(false);
            buffer += c;
          }
          break;
        case "dq":
        case "sq":
          if (c === (state === "dq" ? '"' : "'")) {
            endValue();
            buffer += c;
            state = "inTag";
          } else buffer += c;
          break;
        case "unquoted":
          if (/\s/.test(c) || c === ">") {
            endValue();
            buffer += c;
            state = c === ">" ? enterContent(tagName) : "inTag";
          } else buffer += c;
          break;
      }
    }
  }
  if (capture) endValue();
  flush();
  return out;

  function enterContent(name: string): State {
    if (name === "script" || name === "style" || name === "textarea" || name === "title" || name === "xmp" || name === "noscript") {
      rawEnd = `</${name}`;
      return name === "script" || name === "style" ? "raw" : "text";
    }
    return "text";
  }
}

/**
 * True when a rendered attribute value is a URL a person may follow: http(s), mailto, tel, or no scheme. Character
 * references are decoded and whitespace and control characters removed first, as a browser would before reading the
 * scheme (`java&#x09;script:`, ` javascript:`, `&#106;avascript:` are all script URLs).
 */
export function isSafeUrl(value: string): boolean {
  const plain = decodeCharacterReferences(value).replace(/[\u0000-\u0020\u007f-\u00a0\u1680\u180e\u2000-\u200f\u2028\u2029\u202f\u205f\u3000\ufeff]/g, "");
  const scheme = /^([^/?#]*?):/.exec(plain);
  if (!scheme) return true;
  return SAFE_SCHEMES.has(scheme[1].toLowerCase());
}

/** srcset is a list of "url [descriptor]" candidates: each must pass. */
export function isSafeUrlList(value: string): boolean {
  return value.split(",").every((candidate) => isSafeUrl(candidate.trim().split(/\s+/)[0] ?? ""));
}

const NAMED: Record<string, string> = {
  colon: ":",
  tab: "\t",
  newline: "\n",
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  sol: "/",
  lpar: "(",
  rpar: ")",
  period: ".",
  nbsp: "\u00a0",
  num: "#",
  quest: "?",
};

function decodeCharacterReferences(value: string): string {
  // Twice: `&amp;#106;` written by an author reads as `&#106;` only once decoded, but being strict costs nothing here.
  let text = value;
  for (let round = 0; round < 2; round++) {
    const next = text.replace(/&(?:#(\d{1,8})|#x([0-9a-f]{1,7})|([a-z]{2,8}));?/gi, (match, dec: string | undefined, hex: string | undefined, name: string | undefined) => {
      if (dec !== undefined || hex !== undefined) {
        const code = dec !== undefined ? Number(dec) : parseInt(hex as string, 16);
        return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : "";
      }
      return NAMED[(name as string).toLowerCase()] ?? match;
    });
    if (next === text) break;
    text = next;
  }
  return text;
}
