// The server's logger (lib/log.ts on pino), seen from outside as an operator's collector sees it: one JSON object per
// line with level, time and msg; run and node ids bound; secrets, codes and email bodies censored.
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";

function linesOf(env: Record<string, string>) {
  const { VITEST: _v, VITEST_WORKER_ID: _w, ...rest } = process.env;
  const res = spawnSync(process.execPath, ["--conditions=react-server", "--import", "tsx", "test/operations/fixtures/log-lines.ts"], {
    env: { ...rest, LOG_LEVEL: "info", ...env },
    encoding: "utf8",
  });
  expect(res.status).toBe(0);
  return { stdout: res.stdout, stderr: res.stderr };
}

describe("logs", () => {
  it("are JSON lines with level, time, msg, bound ids and no secret (LOG_FORMAT=json)", () => {
    const { stdout, stderr } = linesOf({ LOG_FORMAT: "json" });
    const out = stdout.trim().split("\n").map((l) => JSON.parse(l));
    const err = stderr.trim().split("\n").map((l) => JSON.parse(l));
    expect(out.map((l) => l.msg)).toEqual(["account signed in", "node finished"]);
    expect(err.map((l) => l.msg)).toEqual(["provider refused a batch"]);
    for (const line of [...out, ...err]) {
      expect(line.level).toMatch(/^(info|warn)$/);
      expect(new Date(line.time).toISOString()).toBe(line.time);
    }
    expect(out[0]).toMatchObject({ accountId: "acc_1", password: "[redacted]", token: "[redacted]", nested: { apiKey: "[redacted]", refreshToken: "[redacted]" } });
    expect(out[1]).toMatchObject({ runId: "run_1", workflowId: "wf_1", accountId: "acc_1" });
    expect(err[0]).toMatchObject({ level: "warn", runId: "run_1", nodeId: "out", html: "[redacted]", otp: "[redacted]", error: { message: "refused", code: "E42" } });
    for (const secret of ["hunter2", "tok_secret", "sk-live", "Hello Ann", "123456"]) expect(stdout + stderr).not.toContain(secret);
  });

  it("are human-readable lines in development (LOG_FORMAT=pretty), still without secrets", () => {
    const { stdout, stderr } = linesOf({ LOG_FORMAT: "pretty" });
    expect(stdout).toMatch(/INFO.*account signed in/);
    expect(stderr).toMatch(/WARN.*provider refused a batch/);
    expect(() => JSON.parse(stdout.split("\n")[0])).toThrow();
    for (const secret of ["hunter2", "tok_secret", "sk-live", "Hello Ann", "123456"]) expect(stdout + stderr).not.toContain(secret);
  });
});
