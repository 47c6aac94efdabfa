// A PostgreSQL server of the test's own (initdb in a temp directory, its own port), so a fault test can stop and
// restart a real server without touching the shared one other tests and engineers use. Uses the machine's
// PostgreSQL binaries (/usr/lib/postgresql/<version>/bin, as Debian installs them; .ci/run installs them); as root
// it runs them as the `postgres` user (initdb refuses root).
import { execFile } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export type PrivatePostgres = { url: string; stop(): Promise<void>; start(): Promise<void>; destroy(): Promise<void> };

export function postgresBinDir(): string | null {
  const base = "/usr/lib/postgresql";
  if (!existsSync(base)) return null;
  const versions = readdirSync(base).filter((v) => existsSync(path.join(base, v, "bin", "initdb"))).sort((a, b) => Number(b) - Number(a));
  return versions[0] ? path.join(base, versions[0], "bin") : null;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = postgresBinDir();
  if (!bin) throw new Error("no PostgreSQL binaries under /usr/lib/postgresql");
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(path.join(os.tmpdir(), "flowmail-pg-"));
  if (asRoot) {
    const { stdout } = await run("id", ["-u", "postgres"]);
    const { stdout: gid } = await run("id", ["-g", "postgres"]);
    chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const exec = (tool: string, args: string[]) =>
    asRoot ? run("runuser", ["-u", "postgres", "--", path.join(bin, tool), ...args]) : run(path.join(bin, tool), args);
  const data = path.join(dir, "data");
  const port = await freePort();
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const pgctl = (...args: string[]) => exec("pg_ctl", ["-D", data, "-w", "-t", "120", "-l", path.join(dir, "log"), ...args]);
  try {
    await exec("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync"]);
    await pgctl("-o", options, "start");
  } catch (error) {
    await pgctl("-m", "immediate", "stop").catch(() => {});
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop: async () => void (await pgctl("-m", "fast", "stop")),
    start: async () => void (await pgctl("-o", options, "start")),
    destroy: async () => {
      await pgctl("-m", "immediate", "stop").catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
