import "server-only";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod";

const boolish = z
  .enum(["1", "0", "true", "false", "yes", "no", ""])
  .transform((v) => v === "1" || v === "true" || v === "yes");

const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === "" ? undefined : v.trim()));

const positiveInt = (fallback: number) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === "") return fallback;
      const n = Number(v);
      if (!Number.isInteger(n) || n <= 0) {
        ctx.addIssue({ code: "custom", message: "must be a positive integer" });
        return z.NEVER;
      }
      return n;
    });

/** Like positiveInt, but 0 is allowed (it means "off" where a variable says so). */
const nonNegativeInt = (fallback: number) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === "") return fallback;
      const n = Number(v);
      if (!Number.isInteger(n) || n < 0) {
        ctx.addIssue({ code: "custom", message: "must be 0 or a positive integer" });
        return z.NEVER;
      }
      return n;
    });

const envSchema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  DATA_DIR: z.string().default(".data"),
  DATABASE_URL: optionalString,
  DATABASE_PREPARED_STATEMENTS: optionalString,
  DATABASE_ASYNC_RUN_STATE: optionalString,
  INNGEST_EVENT_KEY: optionalString,
  INNGEST_SIGNING_KEY: optionalString,
  INNGEST_DEV: optionalString,
  RESEND_API_KEY: optionalString,
  RESEND_BASE_URL: optionalString,
  AUTH_SECRET: optionalString,
  ENCRYPTION_KEY: optionalString,
  GOOGLE_CLIENT_ID: optionalString,
  GOOGLE_CLIENT_SECRET: optionalString,
  GOOGLE_OAUTH_AUTH_URL: optionalString,
  GOOGLE_OAUTH_TOKEN_URL: optionalString,
  GOOGLE_OAUTH_REVOKE_URL: optionalString,
  GOOGLE_API_ROOT_URL: optionalString,
  APP_URL: optionalString,
  /** Set by `next dev` and `next start` to the port they listen on (and honoured by them when given). */
  PORT: optionalString,
  VERCEL_URL: optionalString,
  EMAIL_FROM: z.string().default("Flowmail <noreply@flowmail.local>"),
  RUN_RATE_LIMIT_PER_MINUTE: positiveInt(60),
  EMAIL_DAILY_QUOTA: positiveInt(10_000),
  EMAIL_RATE_PER_SECOND: positiveInt(5),
  EMAIL_SEND_BUDGET_MINUTES: positiveInt(30),
  MAILBOX_RATE_PER_SECOND: positiveInt(0).optional(),
  RESEND_WEBHOOK_SECRET: optionalString,
  UPLOAD_MAX_BYTES: positiveInt(50 * 1024 * 1024),
  UPLOAD_QUOTA_BYTES: positiveInt(1024 * 1024 * 1024),
  EXECUTOR_CONCURRENCY: positiveInt(32),
  RUN_OUTPUT_RETENTION_DAYS: nonNegativeInt(30),
  ALLOW_PRIVATE_NETWORK_TARGETS: boolish.optional(),
  MAILBOX_ENABLED: boolish.optional(),
  TRUST_PROXY: boolish.optional(),
  REFRESH_TOKEN_MAX_DAYS: positiveInt(90),
  LOGIN_ADDRESS_FAILURE_LIMIT: positiveInt(50),
  REGISTRATION_ADDRESS_LIMIT: positiveInt(10),
  REGISTRATION_GLOBAL_LIMIT: positiveInt(200),
  SCHEDULES_PER_ACCOUNT: positiveInt(20),
  UPLOAD_MAX_ROWS: positiveInt(1_000_000),
  VERCEL: optionalString,
  LOG_LEVEL: z.enum(["debug", "info", "warn", "error", "silent"]).default("info"),
  LOG_FORMAT: z.enum(["json", "pretty", ""]).optional(),
  AI_BUDGET_MINUTES: positiveInt(60),
  SMTP_URL: optionalString,
  SES_ENDPOINT: optionalString,
  METRICS_TOKEN: optionalString,
  EXECUTOR: z.enum(["on", "off", ""]).optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalString,
  WORKER_PORT: nonNegativeInt(0),
});

export type Config = {
  nodeEnv: "development" | "production" | "test";
  dataDir: string;
  databaseUrl: string | undefined;
  /** Prepared statements on PostgreSQL (default on; off for a transaction-mode pooler that lacks them). */
  databasePreparedStatements: boolean;
  /** The run engine's own writes through a pool with synchronous_commit=off (db/client.ts, runStateDb). */
  databaseAsyncRunState: boolean;
  inngest: { enabled: boolean; eventKey?: string; signingKey?: string; dev: boolean };
  resend: { apiKey?: string; baseUrl?: string };
  emailTransport: "resend" | "smtp" | "mailbox";
  authSecret: string;
  encryptionKey: string;
  google: {
    clientId?: string;
    clientSecret?: string;
    authUrl?: string;
    tokenUrl?: string;
    revokeUrl?: string;
    apiRootUrl?: string;
    configured: boolean;
  };
  appUrl: string;
  /** APP_URL or VERCEL_URL was set: appUrl is the deployment's address, not the localhost default. */
  appUrlConfigured: boolean;
  emailFrom: string;
  runRateLimitPerMinute: number;
  emailDailyQuota: number;
  /** Provider calls per second for workflow email, shared by every run, process and instance. */
  emailRatePerSecond: number;
  /** How long an OUTPUT node keeps retrying 429/5xx answers before it fails. */
  emailSendBudgetMinutes: number;
  /** Set: the local mailbox is paced too (demos and tests that watch an OUTPUT node's progress); unset: unpaced. */
  mailboxRatePerSecond?: number;
  /** Svix signing secret of Resend's event webhook; unset: POST /api/integrations/resend/events answers 404. */
  resendWebhookSecret?: string;
  uploadMaxBytes: number;
  /** Bytes of CSV uploads an account may keep, resumable uploads still receiving counted at their declared length. */
  uploadQuotaBytes: number;
  /** Rows per CSV (uploads, tus, Drive): more answers 422. */
  uploadMaxRows: number;
  /** MAILBOX_ENABLED=true: the local mailbox may serve in production (a private demo only: anyone can read it). */
  mailboxEnabled: boolean;
  /** TRUST_PROXY=true: the client address is the last X-Forwarded-For entry (set by our own proxy), not the socket's. */
  trustProxy: boolean;
  /** Absolute lifetime of a sign-in's refresh tokens, however often they are rotated. */
  refreshTokenMaxDays: number;
  /** Failed sign-ins per client address per 15 minutes, across all email addresses. */
  loginAddressFailureLimit: number;
  /** Sign-ups per client address per hour (each one emails a code to an address the client chose). */
  registrationAddressLimit: number;
  /** Sign-ups per hour across all clients: a cap on code emails to strangers however many addresses send them. */
  registrationGlobalLimit: number;
  /** Workflows with a schedule per account (each starts runs on its own). */
  schedulesPerAccount: number;
  executorConcurrency: number;
  /** Node outputs and per-email records of runs finished longer ago are dropped (summaries stay); 0 keeps them. */
  runOutputRetentionDays: number;
  allowPrivateNetworkTargets: boolean;
  onVercel: boolean;
  logLevel: "debug" | "info" | "warn" | "error" | "silent";
  /** One JSON object per log line (the production default) or human-readable lines (the development default). */
  logFormat: "json" | "pretty";
  /** How long an AI node keeps waiting out 429s, 5xx answers and timeouts before it fails. */
  aiBudgetMinutes: number;
  /** The deployment's SMTP transport (`smtp://` or `smtps://user:pass@host:port`), beside or instead of Resend. */
  smtpUrl?: string;
  /** Another Amazon SES API address for every SES sender (tests run a local fake there). */
  sesEndpoint?: string;
  /** Set: GET /api/metrics serves Prometheus metrics to `Authorization: Bearer <token>`; unset: it answers 404. */
  metricsToken?: string;
  /** EXECUTOR=off: this process only enqueues runs; worker processes (`npm run worker`) execute them. */
  executorEnabled: boolean;
  /** Set: OpenTelemetry traces are exported over OTLP/HTTP to this address; unset: tracing is off. */
  otelExporterEndpoint?: string;
  /** A worker process's port for its health, readiness and metrics probes; 0: it listens on none. */
  workerPort: number;
};

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

let cached: Config | undefined;

/** Reads and validates the environment once. Tests call `resetConfig()` after changing `process.env`. */
export function getConfig(): Config {
  if (!cached) cached = loadConfig(process.env);
  return cached;
}

export function resetConfig(): void {
  cached = undefined;
}

export function loadConfig(env: NodeJS.ProcessEnv): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join("\n")}`);
  }
  const e = parsed.data;
  const dataDir = path.resolve(e.DATA_DIR);
  const onVercel = Boolean(e.VERCEL);
  const inngestEnabled = Boolean(e.INNGEST_EVENT_KEY || e.INNGEST_SIGNING_KEY || e.INNGEST_DEV);

  // Every missing variable is named at once, so a deployment is not fixed one failed start at a time.
  const problems: string[] = [];
  if (onVercel) {
    const missing: string[] = [];
    if (!e.DATABASE_URL) missing.push("DATABASE_URL (managed PostgreSQL)");
    if (!inngestEnabled) missing.push("INNGEST_EVENT_KEY and INNGEST_SIGNING_KEY (the Inngest integration)");
    if (missing.length > 0) {
      problems.push(
        `Flowmail cannot use its embedded database and executor on Vercel (no writable disk, no background process). Set: ${missing.join(", ")}.`,
      );
    }
  }
  const authSecret = e.AUTH_SECRET ?? developmentSecret(e.NODE_ENV, dataDir, problems);
  const transport = emailTransport(e, problems);
  if (problems.length === 1) throw new ConfigError(problems[0]);
  if (problems.length > 1) throw new ConfigError(`${problems.length} settings are missing:\n${problems.map((p) => `  - ${p}`).join("\n")}`);

  const appUrl = (e.APP_URL ?? (e.VERCEL_URL ? `https://${e.VERCEL_URL}` : `http://localhost:${listeningPort(e.PORT)}`)).replace(/\/+$/, "");

  return {
    nodeEnv: e.NODE_ENV,
    dataDir,
    databaseUrl: e.DATABASE_URL,
    databasePreparedStatements: !["false", "0", "off", "no"].includes((e.DATABASE_PREPARED_STATEMENTS ?? "").trim().toLowerCase()),
    databaseAsyncRunState: !["false", "0", "off", "no"].includes((e.DATABASE_ASYNC_RUN_STATE ?? "").trim().toLowerCase()),
    inngest: {
      enabled: inngestEnabled,
      eventKey: e.INNGEST_EVENT_KEY,
      signingKey: e.INNGEST_SIGNING_KEY,
      dev: Boolean(e.INNGEST_DEV && e.INNGEST_DEV !== "0"),
    },
    resend: { apiKey: e.RESEND_API_KEY, baseUrl: e.RESEND_BASE_URL },
    emailTransport: transport,
    authSecret,
    encryptionKey: e.ENCRYPTION_KEY ?? authSecret,
    google: {
      clientId: e.GOOGLE_CLIENT_ID,
      clientSecret: e.GOOGLE_CLIENT_SECRET,
      authUrl: e.GOOGLE_OAUTH_AUTH_URL,
      tokenUrl: e.GOOGLE_OAUTH_TOKEN_URL,
      revokeUrl: e.GOOGLE_OAUTH_REVOKE_URL,
      apiRootUrl: e.GOOGLE_API_ROOT_URL,
      configured: Boolean(e.GOOGLE_CLIENT_ID && e.GOOGLE_CLIENT_SECRET),
    },
    appUrl,
    appUrlConfigured: Boolean(e.APP_URL || e.VERCEL_URL),
    emailFrom: e.EMAIL_FROM,
    runRateLimitPerMinute: e.RUN_RATE_LIMIT_PER_MINUTE,
    emailDailyQuota: e.EMAIL_DAILY_QUOTA,
    emailRatePerSecond: e.EMAIL_RATE_PER_SECOND,
    emailSendBudgetMinutes: e.EMAIL_SEND_BUDGET_MINUTES,
    mailboxRatePerSecond: e.MAILBOX_RATE_PER_SECOND || undefined,
    resendWebhookSecret: e.RESEND_WEBHOOK_SECRET,
    uploadMaxBytes: e.UPLOAD_MAX_BYTES,
    uploadQuotaBytes: e.UPLOAD_QUOTA_BYTES,
    uploadMaxRows: e.UPLOAD_MAX_ROWS,
    mailboxEnabled: e.MAILBOX_ENABLED ?? false,
    trustProxy: e.TRUST_PROXY ?? false,
    refreshTokenMaxDays: e.REFRESH_TOKEN_MAX_DAYS,
    loginAddressFailureLimit: e.LOGIN_ADDRESS_FAILURE_LIMIT,
    registrationAddressLimit: e.REGISTRATION_ADDRESS_LIMIT,
    registrationGlobalLimit: e.REGISTRATION_GLOBAL_LIMIT,
    schedulesPerAccount: e.SCHEDULES_PER_ACCOUNT,
    executorConcurrency: e.EXECUTOR_CONCURRENCY,
    runOutputRetentionDays: e.RUN_OUTPUT_RETENTION_DAYS,
    allowPrivateNetworkTargets: e.ALLOW_PRIVATE_NETWORK_TARGETS ?? e.NODE_ENV !== "production",
    onVercel,
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT ? e.LOG_FORMAT : e.NODE_ENV === "production" ? "json" : "pretty",
    aiBudgetMinutes: e.AI_BUDGET_MINUTES,
    smtpUrl: e.SMTP_URL,
    sesEndpoint: e.SES_ENDPOINT,
    metricsToken: e.METRICS_TOKEN,
    executorEnabled: e.EXECUTOR !== "off",
    otelExporterEndpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT,
    workerPort: e.WORKER_PORT,
  };
}

/**
 * Resend with a key, else SMTP with SMTP_URL, else the local mailbox — which in production serves only with MAILBOX_ENABLED=true: it shows every
 * email (sign-up codes included) to anyone who reaches the server. `next build` runs in production mode
 * without runtime secrets, so the refusal waits for the server's start.
 */
function emailTransport(e: z.infer<typeof envSchema>, problems: string[]): "resend" | "smtp" | "mailbox" {
  if (e.RESEND_API_KEY) return "resend";
  if (e.SMTP_URL) return "smtp";
  if (e.NODE_ENV === "production" && !e.MAILBOX_ENABLED && process.env.NEXT_PHASE !== "phase-production-build") {
    problems.push(
      "No email transport for production: set RESEND_API_KEY (send through Resend), SMTP_URL (an SMTP server), or MAILBOX_ENABLED=true for a private demo " +
        "(the local mailbox lets anyone who reaches the server read every email, sign-up codes included).",
    );
  }
  return "mailbox";
}

/** The port this server listens on when APP_URL is unset (`next dev`/`next start` put it in PORT before loading the app). */
function listeningPort(port: string | undefined): number {
  const n = Number(port);
  return Number.isInteger(n) && n > 0 && n < 65536 ? n : 3000;
}

/**
 * The address links to this server start with. APP_URL (or Vercel's) when set; otherwise, during a request in
 * development, the address the request came in on (so links work at 127.0.0.1, [::1] or a LAN name), else
 * localhost on the port the server listens on.
 */
export function publicAppUrl(req?: Request): string {
  const config = getConfig();
  if (config.appUrlConfigured || !req || config.nodeEnv === "production") return config.appUrl;
  try {
    return new URL(req.url).origin;
  } catch {
    return config.appUrl;
  }
}

/** Development and tests: a secret generated once and kept in the data directory. Production must set AUTH_SECRET. */
function developmentSecret(nodeEnv: string, dataDir: string, problems: string[]): string {
  if (nodeEnv === "production") {
    problems.push("AUTH_SECRET is required in production: set it to a long random string (for example `openssl rand -base64 32`).");
    return "";
  }
  const file = path.join(dataDir, "auth-secret");
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  mkdirSync(dataDir, { recursive: true });
  const secret = randomBytes(32).toString("base64url");
  try {
    writeFileSync(file, secret + "\n", { mode: 0o600, flag: "wx" });
    return secret;
  } catch (error) {
    // Another process created it first: use theirs.
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return readFileSync(file, "utf8").trim();
    throw error;
  }
}
