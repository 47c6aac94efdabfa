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
  // Several builds side by side on one checkout (parallel work, benchmarks) each take their own directory.
  distDir: process.env.NEXT_DIST_DIR || ".next",
  typedRoutes: false,
};

export default nextConfig;
