import "server-only";
import { compile } from "html-to-text";
import { Marked } from "marked";
import { isSafeUrl } from "@/lib/graph/html-slots";

/**
 * Markdown bodies: the author's Markdown (trusted, like an HTML body) rendered to HTML by marked, after every
 * interpolated value went through escapeMarkdownValue — so a value is always shown as the text it is, never read as
 * Markdown or HTML (a name "**Bob**" or "<img src=x>" arrives as those characters).
 */
const marked = new Marked({
  gfm: true,
  breaks: false,
  async: false,
  // A link or image whose address is not http(s), mailto, tel or relative (`[x](javascript:…)`, `<data:…>`, from the
  // author or from a value) points nowhere; raw HTML in the Markdown is placed as in an HTML body (html-slots.ts).
  walkTokens(token) {
    if ((token.type === "link" || token.type === "image") && !isSafeUrl(token.href)) token.href = "#";
  },
});

export function markdownToHtml(markdown: string): string {
  return marked.parse(markdown, { async: false });
}

/** Backslash before every ASCII punctuation Markdown gives a meaning to; `&`, `<`, `>` as HTML entities. */
export function escapeMarkdownValue(value: string): string {
  return value.replace(/[\\`*_{}[\]()#+\-.!|~]/g, "\\$&").replace(/[&<>]/g, (c) => (c === "&" ? "&amp;" : c === "<" ? "&lt;" : "&gt;"));
}

/** The plain-text part of an HTML email (links written as "text [url]"), wrapped at 78 columns. */
const toText = compile({
  wordwrap: 78,
  selectors: [
    { selector: "img", format: "skip" },
    { selector: "a", options: { hideLinkHrefIfSameAsText: true } },
  ],
});

export function plainTextOf(html: string): string {
  return toText(html);
}
