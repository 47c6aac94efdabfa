import { NextResponse, type NextRequest } from "next/server";

/**
 * Runs before every API route. A path with a malformed percent escape (`/api/workflows/%E0%A4%A`) cannot be decoded
 * into route parameters; Next.js would answer it with a plain-text 500 before any route code runs, so it gets the API's
 * usual problem+json 400 here instead.
 */
export function proxy(request: NextRequest): NextResponse {
  const path = request.nextUrl.pathname;
  try {
    decodeURIComponent(path);
  } catch {
    return NextResponse.json(
      {
        type: "about:blank", title: "Bad request", status: 400, code: "bad_request",
        detail: "The request path has a malformed percent escape (a % must be followed by two hex digits of valid UTF-8).",
      },
      { status: 400, headers: { "Content-Type": "application/problem+json", "Cache-Control": "no-store" } },
    );
  }
  return NextResponse.next();
}

export const config = { matcher: "/api/:path*" };
