# syntax=docker/dockerfile:1
# Flowmail's image: the Next.js standalone server (web), the bundled worker and the bundled migration, one image for
# the three roles of compose.yaml. `docker build -t flowmail .`; see docs/deploy.md.

# 1. Every dependency, for the build (postinstall applies patches/ with patch-package).
FROM node:22-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY patches ./patches
RUN npm ci --no-audit --no-fund

# 2. The build: .next/standalone (server.js and the files it needs), .next/static, and dist/ (worker and migration).
FROM deps AS build
ENV NEXT_TELEMETRY_DISABLED=1
COPY . .
# The build reads the configuration once without runtime secrets; this placeholder is never used at run time.
RUN AUTH_SECRET=build-time-placeholder-not-used-at-runtime npm run build && npm run build:worker

# 3. Production dependencies only: the worker and migration bundles load their packages from node_modules.
FROM node:22-bookworm-slim AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY patches ./patches
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# 4. The runtime: no compiler, no dev dependencies, a non-root user.
FROM node:22-bookworm-slim AS runtime
ENV NODE_ENV=production \
    NEXT_TELEMETRY_DISABLED=1 \
    PORT=3000 \
    HOSTNAME=0.0.0.0 \
    LOG_FORMAT=json \
    DATA_DIR=/app/.data
WORKDIR /app
COPY --from=build --chown=node:node /app/.next/standalone ./
COPY --from=build --chown=node:node /app/.next/static ./.next/static
COPY --from=build --chown=node:node /app/public ./public
COPY --from=build --chown=node:node /app/dist ./dist
COPY --from=build --chown=node:node /app/db/migrations ./db/migrations
COPY --from=prod-deps --chown=node:node /app/node_modules ./node_modules
RUN mkdir -p /app/.data && chown node:node /app/.data
USER node
EXPOSE 3000
# Liveness: the process answers and its database too (GET /api/health). Readiness for a load balancer: /api/health/ready.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/api/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# The web server, with npm start's Node flags (docs/configuration.md, "Node flags"). The worker:
# `node --conditions=react-server dist/worker/index.mjs`; the migration: `node --conditions=react-server
# dist/db/migrate-cli.mjs` (compose.yaml runs all three).
CMD ["node", "--min-semi-space-size=16", "--max-semi-space-size=32", "--v8-pool-size=1", "server.js"]
