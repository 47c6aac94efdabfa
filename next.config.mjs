/** @type {import('next').NextConfig} */
const nextConfig = {
  // Native or WASM packages that must be loaded by Node at run time, not bundled.
  serverExternalPackages: ["@node-rs/argon2", "@electric-sql/pglite", "postgres", "papaparse"],
  poweredByHeader: false,
  typedRoutes: false,
};

export default nextConfig;
