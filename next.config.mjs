/** @type {import('next').NextConfig} */
const nextConfig = {
  // Native or WASM packages that must be loaded by Node at run time, not bundled.
  serverExternalPackages: ["@node-rs/argon2", "@electric-sql/pglite", "postgres", "papaparse"],
  poweredByHeader: false,
  // Several builds side by side on one checkout (parallel work, benchmarks) each take their own directory.
  distDir: process.env.NEXT_DIST_DIR || ".next",
  typedRoutes: false,
};

export default nextConfig;
