/**
 * What a person sees of another service's error: its name or code and a bounded, cleaned message. Provider answers
 * can carry file paths, SQL, stack lines or markup (a misconfigured openai-compatible server, a proxy's HTML page);
 * copied verbatim they would leak into node errors and run logs.
 */
export function sanitizeProviderMessage(message: unknown, maxLength = 240): string {
  let text = typeof message === "string" ? message : message instanceof Error ? message.message : "";
  text = text
    .replace(/<[^>]{0,200}>/g, " ") // markup of an HTML error page
    .replace(/\bat [^\n]*\([^)]*\)/g, " ") // stack frames
    .replace(/(?:[A-Za-z]:)?(?:[\\/][\w.@-]+){2,}[\\/]?/g, "…") // file system paths
    .replace(/\b(select|insert|update|delete)\b[\s\S]*\b(from|into|set|where)\b[\s\S]*/i, "…") // SQL text
    .replace(/[\u0000-\u001f\u007f]+/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  if (!text) return "no details given";
  return text.length > maxLength ? `${text.slice(0, maxLength - 1)}…` : text;
}

/** "Resend 422 validation_error: …": the provider, its status or code, and the sanitised message. */
export function providerErrorText(provider: string, codeOrStatus: string | number | undefined, message: unknown): string {
  const code = codeOrStatus === undefined || codeOrStatus === "" ? "" : ` ${String(codeOrStatus).slice(0, 60)}`;
  return `${provider}${code}: ${sanitizeProviderMessage(message)}`;
}
