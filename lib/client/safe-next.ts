/**
 * Where to go after sign-in: the `next` path from the query string, resolved the way the browser will resolve it, and
 * followed only when it lands on this origin. A string test is not enough: browsers read `/\evil.example` and
 * `/%5Cevil.example`-style paths as `//evil.example`, and tabs or newlines inside a URL are dropped. Returns a path
 * (with query and hash) on `origin`, or `/workflows`.
 */
export function safeNext(next: string | null | undefined, origin: string): string {
  const fallback = "/workflows";
  if (!next || !next.startsWith("/")) return fallback;
  let url: URL;
  try {
    url = new URL(next, origin);
  } catch {
    return fallback;
  }
  if (url.origin !== new URL(origin).origin) return fallback;
  return `${url.pathname}${url.search}${url.hash}`;
}
