/*
 * Prometheus metrics of a Flowmail process, served by GET /api/metrics when METRICS_TOKEN is set. Every name starts
 * with `flowmail_`. Labels are bounded sets (statuses, triggers, transports, providers, route patterns): never an
 * account, a workflow or an address. Counters and histograms count what this process did; the queue's gauges are read
 * from the database at scrape time, so every instance reports the same queue.
 *
 * Other modules record through the small `metrics.*` functions below; they cost a label lookup and an addition.
 */
import { Counter, Gauge, Histogram, Registry } from "prom-client";

type Collector = () => Promise<void> | void;

function createMetrics() {
  const registry = new Registry();
  const collectors: { queue?: Collector; executor?: Collector } = {};
  const runDurationBuckets = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];
  const m = {
    registry,
    collectors,
    runsFinished: new Counter({
      name: "flowmail_runs_finished_total",
      help: "Runs this process finalized, by final status and by how they were started.",
      labelNames: ["status", "trigger"] as const,
      registers: [registry],
    }),
    runDuration: new Histogram({
      name: "flowmail_run_duration_seconds",
      help: "From the claim of a run to its finalization in this process, by final status.",
      labelNames: ["status"] as const,
      buckets: runDurationBuckets,
      registers: [registry],
    }),
    runsPending: new Gauge({
      name: "flowmail_runs_pending",
      help: "Runs waiting in any workflow's queue (read from the database: the same on every instance).",
      registers: [registry],
      async collect() {
        await collectors.queue?.();
      },
    }),
    oldestPendingAge: new Gauge({
      name: "flowmail_oldest_pending_run_age_seconds",
      help: "How long the oldest pending run has waited (0 when none waits).",
      registers: [registry],
      async collect() {
        await collectors.queue?.();
      },
    }),
    slotsBusy: new Gauge({
      name: "flowmail_executor_slots_busy",
      help: "Run executor slots of this process working on a workflow's queue.",
      registers: [registry],
      collect() {
        collectors.executor?.();
      },
    }),
    slots: new Gauge({
      name: "flowmail_executor_slots",
      help: "Run executor slots of this process (EXECUTOR_CONCURRENCY; 0 when this process executes no runs).",
      registers: [registry],
    }),
    emails: new Counter({
      name: "flowmail_emails_total",
      help: "Emails handed to a transport, by transport and outcome (sent, failed).",
      labelNames: ["transport", "status"] as const,
      registers: [registry],
    }),
    providerAnswers: new Counter({
      name: "flowmail_provider_responses_total",
      help: "Email provider answers, by transport and HTTP status code (0: no answer, a network failure).",
      labelNames: ["transport", "status_code"] as const,
      registers: [registry],
    }),
    sendSlotWait: new Histogram({
      name: "flowmail_send_slot_wait_seconds",
      help: "Time an email batch waited for a slot of the shared provider rate limit.",
      buckets: [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    }),
    aiCalls: new Counter({
      name: "flowmail_ai_calls_total",
      help: "AI model calls, by provider and outcome (ok, error, timeout).",
      labelNames: ["provider", "status"] as const,
      registers: [registry],
    }),
    aiTokens: new Counter({
      name: "flowmail_ai_tokens_total",
      help: "AI tokens, by kind (input, output).",
      labelNames: ["kind"] as const,
      registers: [registry],
    }),
    aiCost: new Counter({
      name: "flowmail_ai_cost_usd_total",
      help: "Estimated cost of AI calls in US dollars.",
      registers: [registry],
    }),
    httpRequests: new Counter({
      name: "flowmail_http_requests_total",
      help: "API requests, by route pattern, method and status code.",
      labelNames: ["route", "method", "status"] as const,
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: "flowmail_http_request_duration_seconds",
      help: "API request handling time, by route pattern and method.",
      labelNames: ["route", "method"] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
  };
  return m;
}

type Metrics = ReturnType<typeof createMetrics>;
// One set per process, kept on globalThis: Next.js bundles route handlers and instrumentation apart, and each bundle
// evaluates this module; every copy must count into the same registry.
const slot = globalThis as unknown as { __flowmailMetrics?: Metrics };
const store = (): Metrics => (slot.__flowmailMetrics ??= createMetrics());

export type EmailOutcome = "sent" | "failed";
export type AiCallStatus = "ok" | "error" | "timeout";

export const metrics = {
  runFinished(status: string, trigger: string | undefined, seconds: number): void {
    const m = store();
    m.runsFinished.inc({ status, trigger: trigger ?? "manual" });
    m.runDuration.observe({ status }, seconds);
  },
  emails(transport: string, status: EmailOutcome, count: number): void {
    if (count > 0) store().emails.inc({ transport, status }, count);
  },
  /** A provider's answer to one call; `statusCode` 0 for a network failure (no answer). */
  providerAnswer(transport: string, statusCode: number): void {
    store().providerAnswers.inc({ transport, status_code: String(statusCode) });
  },
  sendSlotWait(seconds: number): void {
    store().sendSlotWait.observe(seconds);
  },
  /** Times a send-slot wait (the shared limiter's `acquire`). */
  async timeSendSlot<T>(wait: Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await wait;
    } finally {
      store().sendSlotWait.observe((performance.now() - started) / 1000);
    }
  },
  aiCall(provider: string, status: AiCallStatus): void {
    store().aiCalls.inc({ provider, status });
  },
  aiTokens(kind: "input" | "output", count: number | undefined): void {
    if (count !== undefined && Number.isFinite(count) && count > 0) store().aiTokens.inc({ kind }, count);
  },
  aiCost(usd: number | undefined): void {
    if (usd !== undefined && Number.isFinite(usd) && usd > 0) store().aiCost.inc(usd);
  },
  httpRequest(route: string, method: string, status: number, seconds: number): void {
    const m = store();
    m.httpRequests.inc({ route, method, status: String(status) });
    m.httpDuration.observe({ route, method }, seconds);
  },
};

/** Installs what the queue gauges read at scrape time (a database query) and the executor's slot counts. */
export function setMetricsCollectors(collectors: { queue?: () => Promise<{ pending: number; oldestSeconds: number }>; executor?: () => { busy: number; slots: number } }): void {
  const m = store();
  if (collectors.queue) {
    const read = collectors.queue;
    // Both queue gauges are collected concurrently in one scrape: they share one read of the database.
    let inFlight: Promise<void> | undefined;
    m.collectors.queue = () =>
      (inFlight ??= read()
        .then(({ pending, oldestSeconds }) => {
          m.runsPending.set(pending);
          m.oldestPendingAge.set(oldestSeconds);
        })
        .finally(() => (inFlight = undefined)));
  }
  if (collectors.executor) {
    const read = collectors.executor;
    m.collectors.executor = () => {
      const { busy, slots } = read();
      m.slotsBusy.set(busy);
      m.slots.set(slots);
    };
  }
}

/** The Prometheus text exposition of every metric, and its content type. */
export async function renderMetrics(): Promise<{ body: string; contentType: string }> {
  const m = store();
  return { body: await m.registry.metrics(), contentType: m.registry.contentType };
}

/** Tests: forget every count (a fresh registry). */
export function resetMetrics(): void {
  slot.__flowmailMetrics = undefined;
}
