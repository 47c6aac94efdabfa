// Issue 20, point 1: the local mailbox (every email, sign-up codes included, readable without signing in) must not
// serve on a production server unless someone asked for it (CONTRACT 15).
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError, loadConfig, resetConfig } from "@/lib/config";

const production = { NODE_ENV: "production", AUTH_SECRET: "x-0123456789abcdef0123456789abcdef", DATA_DIR: process.env.DATA_DIR } as NodeJS.ProcessEnv;

afterEach(() => resetConfig());

describe("production email transport", () => {
  it("refuses a production configuration with neither RESEND_API_KEY nor MAILBOX_ENABLED=true, naming both", () => {
    expect(() => loadConfig(production)).toThrow(ConfigError);
    expect(() => loadConfig(production)).toThrow(/RESEND_API_KEY.*MAILBOX_ENABLED=true/s);
    expect(() => loadConfig({ ...production, MAILBOX_ENABLED: "false" })).toThrow(ConfigError);
  });

  it("serves the mailbox in production only with MAILBOX_ENABLED=true, and Resend with a key", () => {
    expect(loadConfig({ ...production, MAILBOX_ENABLED: "true" }).emailTransport).toBe("mailbox");
    expect(loadConfig({ ...production, RESEND_API_KEY: "re_123" }).emailTransport).toBe("resend");
    expect(loadConfig({ ...production, NEXT_PHASE: undefined, NODE_ENV: "development" }).emailTransport).toBe("mailbox");
  });

  it("stops the server process at start (instrumentation) instead of serving the mailbox", async () => {
    const saved = { ...process.env };
    const exits: unknown[] = [];
    const realExit = process.exit;
    const realError = console.error;
    const printed: string[] = [];
    process.exit = ((code?: number) => {
      exits.push(code);
      throw new Error("exit");
    }) as typeof process.exit;
    console.error = (...args: unknown[]) => void printed.push(args.join(" "));
    try {
      Object.assign(process.env, { NODE_ENV: "production", NEXT_RUNTIME: "nodejs" });
      delete process.env.NEXT_PHASE;
      resetConfig();
      const { register } = await import("@/instrumentation");
      await expect(register()).rejects.toThrow("exit");
      expect(exits).toEqual([1]);
      expect(printed.join("\n")).toMatch(/MAILBOX_ENABLED=true/);
    } finally {
      process.exit = realExit;
      console.error = realError;
      for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
      Object.assign(process.env, saved);
      resetConfig();
    }
  });
});
