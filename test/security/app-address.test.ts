// Start-up and addresses: a production start names every missing variable at once; without APP_URL, links point at
// the address the server really listens on (the request's in development, else localhost on PORT); next dev serves
// its scripts to 127.0.0.1 and [::1] as well as localhost.
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError, loadConfig, publicAppUrl, resetConfig } from "@/lib/config";
// @ts-expect-error next.config.mjs is plain JavaScript without declarations
import nextConfig from "@/next.config.mjs";

const saved = { ...process.env };
afterEach(() => {
  process.env = { ...saved };
  resetConfig();
});

describe("production start-up", () => {
  it("names every missing variable in one message", () => {
    const env = { NODE_ENV: "production", DATA_DIR: process.env.DATA_DIR } as NodeJS.ProcessEnv;
    expect(() => loadConfig(env)).toThrow(ConfigError);
    let message = "";
    try {
      loadConfig(env);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/AUTH_SECRET/);
    expect(message).toMatch(/RESEND_API_KEY/);
    expect(message).toMatch(/^2 settings are missing/);
  });

  it("names the Vercel requirements together with the others", () => {
    const env = { NODE_ENV: "production", VERCEL: "1", DATA_DIR: process.env.DATA_DIR } as NodeJS.ProcessEnv;
    expect(() => loadConfig(env)).toThrow(/DATABASE_URL[\s\S]*AUTH_SECRET[\s\S]*RESEND_API_KEY/);
  });
});

describe("the app's address without APP_URL", () => {
  it("defaults to localhost on the port the server listens on", () => {
    expect(loadConfig({ NODE_ENV: "development", PORT: "4251" } as NodeJS.ProcessEnv).appUrl).toBe("http://localhost:4251");
    expect(loadConfig({ NODE_ENV: "development" } as NodeJS.ProcessEnv).appUrl).toBe("http://localhost:3000");
    expect(loadConfig({ NODE_ENV: "development", APP_URL: "https://flow.example/" } as NodeJS.ProcessEnv).appUrl).toBe("https://flow.example");
  });

  it("uses the request's address for links made during a request in development, APP_URL when set", () => {
    delete process.env.APP_URL;
    delete process.env.VERCEL_URL;
    process.env.PORT = "4252";
    resetConfig();
    expect(publicAppUrl(new Request("http://127.0.0.1:4252/api/workflows/x/hooks"))).toBe("http://127.0.0.1:4252");
    expect(publicAppUrl()).toBe("http://localhost:4252");
    process.env.APP_URL = "https://flow.example";
    resetConfig();
    expect(publicAppUrl(new Request("http://127.0.0.1:4252/x"))).toBe("https://flow.example");
  });
});

describe("next dev", () => {
  it("allows its dev resources for 127.0.0.1 and [::1]", () => {
    expect(nextConfig.allowedDevOrigins).toEqual(expect.arrayContaining(["127.0.0.1", "localhost", "[::1]"]));
  });
});
