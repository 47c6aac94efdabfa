// Small rules of the observability code: route patterns never carry ids, trace context parsing refuses what W3C
// refuses, spans cost nothing while tracing is off, and a web process without an executor needs PostgreSQL.
import { describe, expect, it } from "vitest";
import { resetConfig } from "@/lib/config";
import { routePattern } from "@/lib/observability/http";
import { formatTraceparent, outboundTraceparent, parseTraceparent, withRequestTraceparent, currentTraceparent } from "@/lib/observability/trace-context";
import { tracingEnabled, withSpan } from "@/lib/observability/tracing";
import { startBackgroundWork, EXECUTOR_OFF_NEEDS_POSTGRES } from "@/lib/services/background/start-background-work";

describe("routePattern", () => {
  it("replaces every segment a parameter filled by the parameter's name", () => {
    expect(routePattern("/api/workflows/wf_1/run", { workflowId: "wf_1" })).toBe("/api/workflows/[workflowId]/run");
    expect(routePattern("/api/workflows/runs/run_9/nodes/out/emails", { runId: "run_9", nodeId: "out" })).toBe("/api/workflows/runs/[runId]/nodes/[nodeId]/emails");
    // A parameter whose value equals a fixed segment: the last occurrence is the parameter's.
    expect(routePattern("/api/workflows/runs/runs", { runId: "runs" })).toBe("/api/workflows/runs/[runId]");
    expect(routePattern("/api/hooks/a%20b", { token: "a b" })).toBe("/api/hooks/[token]");
    expect(routePattern("/api/nextauth/callback/google", { nextauth: ["callback", "google"] })).toBe("/api/nextauth/[...nextauth]");
    expect(routePattern("/api/health", {})).toBe("/api/health");
  });
});

describe("traceparent", () => {
  const valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

  it("parses a valid header and formats it back", () => {
    const parsed = parseTraceparent(valid)!;
    expect(parsed).toMatchObject({ traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7", traceFlags: 1, isRemote: true });
    expect(formatTraceparent(parsed)).toBe(valid);
    expect(parseTraceparent(valid.toUpperCase())).toBeDefined();
  });

  it("refuses malformed, all-zero and version ff headers", () => {
    for (const bad of [
      undefined,
      "",
      "garbage",
      "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
      "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
    ]) {
      expect(parseTraceparent(bad), String(bad)).toBeUndefined();
    }
  });

  it("keeps a request's header for the run it enqueues while this process does not trace", () => {
    expect(tracingEnabled()).toBe(false);
    expect(currentTraceparent()).toBeNull();
    expect(withRequestTraceparent(valid, () => currentTraceparent())).toBe(valid);
    expect(withRequestTraceparent("nonsense", () => currentTraceparent())).toBeNull();
    expect(outboundTraceparent(valid)).toBe(valid);
    expect(outboundTraceparent("nonsense")).toBeUndefined();
  });
});

describe("withSpan while tracing is off", () => {
  it("calls the function without a span and passes its result and its error through", async () => {
    expect(await withSpan("run", {}, async (span) => (span === undefined ? "no span" : "span"))).toBe("no span");
    await expect(withSpan("run", {}, async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
  });
});

describe("EXECUTOR=off", () => {
  it("needs PostgreSQL: the embedded database serves one process, which must execute its own runs", async () => {
    process.env.EXECUTOR = "off";
    resetConfig();
    try {
      await expect(startBackgroundWork()).rejects.toThrow(EXECUTOR_OFF_NEEDS_POSTGRES);
    } finally {
      delete process.env.EXECUTOR;
      resetConfig();
    }
  });
});
