const dev = process.env.NODE_ENV !== "production";

/**
 * Every page and answer: no framing by other sites (clickjacking), no MIME sniffing, referrers only to this origin, and
 * HTTPS remembered in production. The policy allows only this origin's scripts, styles, images and connections. Next.js
 * inlines its bootstrap scripts and React Flow positions nodes with inline styles, hence 'unsafe-inline'; `next dev`
 * also evaluates modules ('unsafe-eval') and talks to its hot-reload socket (ws:).
 */
const contentSecurityPolicy = [
  "default-src 'self'",
  `script-src 'self' 'unsafe-inline'${dev ? " 'unsafe-eval'" : ""}`,
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  `connect-src 'self'${dev ? " ws: wss:" : ""}`,
  "worker-src 'self' blob:",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const securityHeaders = [
  { key: "Content-Security-Policy", value: contentSecurityPolicy },
  { key: "X-Content-Type-Options", value: "nosniff" },
  { key: "Referrer-Policy", value: "strict-origin-when-cross-origin" },
  { key: "X-Frame-Options", value: "DENY" },
  ...(dev ? [] : [{ key: "Strict-Transport-Security", value: "max-age=31536000; includeSubDomains" }]),
];

/** @type {import('next').NextConfig} */
const nextConfig = {
  // Loaded by Node from node_modules at run time instead of bundled: @node-rs/argon2 (a native binary),
  // @electric-sql/pglite (WASM and data files read from beside its code), postgres (the driver as patched at install,
  // patches/postgres+3.4.9.patch, which db/client.ts checks before use) and papaparse.
  serverExternalPackages: ["@node-rs/argon2", "@electric-sql/pglite", "postgres", "papaparse"],
  // Vercel refuses the embedded database (lib/config.ts: DATABASE_URL is required there), so PGlite (about 19 MB,
  // reached only through db/client.ts's dynamic import) stays out of every server function's traced files.
  ...(process.env.VERCEL ? { outputFileTracingExcludes: { "*": ["node_modules/@electric-sql/pglite/**"] } } : {}),
  // The container image runs .next/standalone/server.js (a minimal server with only the files it needs); `next start`
  // serves the same build as before (Next.js prints a warning naming server.js, and carries on).
  output: "standalone",
  // Read at run time from the working directory (readiness compares them with the database; PGlite applies them).
  outputFileTracingIncludes: { "*": ["db/migrations/**/*"] },
  poweredByHeader: false,
  // `next dev` serves its scripts and hot-reload socket only to the hosts listed here besides localhost: without them a
  // page opened at http://127.0.0.1:3000 never becomes interactive.
  allowedDevOrigins: ["127.0.0.1", "localhost", "[::1]", "::1"],
  // Several builds side by side on one checkout (parallel work, benchmarks) each take their own directory.
  distDir: process.env.NEXT_DIST_DIR || ".next",
  typedRoutes: false,
  async headers() {
    return [{ source: "/:path*", headers: securityHeaders }];
  },
};

export default nextConfig;
