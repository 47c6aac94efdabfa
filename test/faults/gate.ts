import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * An HTTP pass-through in front of a fake provider that can hold requests instead of forwarding them, so a fault
 * test can act (kill a process, drop database connections) at a known point of a run instead of after a sleep.
 *
 *   const gate = await startGate(resend.url);
 *   gate.holdAfter(8)            // forward 8 more requests, then hold every further one
 *   gate.holdAfter(1, (r) => r.headers["idempotency-key"]?.startsWith("shared:"))   // count and hold only those
 *   await gate.waitForHeld(1)    // resolves once a request is being held
 *   await gate.release()         // forwards the held requests to the provider (answering their clients if still there)
 */
export type Gate = {
  url: string;
  holdAfter(count: number, matches?: (request: { path: string; headers: Record<string, string> }) => boolean): void;
  open(): void;
  held(): number;
  waitForHeld(count: number, timeoutMs?: number): Promise<void>;
  release(): Promise<void>;
  close(): Promise<void>;
};

type Pending = { method: string; path: string; headers: Record<string, string>; body: Buffer; res: http.ServerResponse };

export async function startGate(targetUrl: string): Promise<Gate> {
  let budget = Infinity;
  let matches: ((request: { path: string; headers: Record<string, string> }) => boolean) | undefined;
  const held: Pending[] = [];
  let waiters: (() => void)[] = [];

  async function forward(p: Pending): Promise<void> {
    const answer = await fetch(`${targetUrl}${p.path}`, {
      method: p.method,
      headers: p.headers,
      body: p.method === "GET" || p.method === "HEAD" ? undefined : new Uint8Array(p.body),
    }).catch(() => null);
    if (p.res.destroyed || p.res.writableEnded) return; // its client died: the provider still processed the request
    if (!answer) {
      p.res.socket?.destroy();
      return;
    }
    const headers: Record<string, string> = {};
    answer.headers.forEach((v, k) => {
      if (!["content-length", "transfer-encoding", "connection", "content-encoding"].includes(k)) headers[k] = v;
    });
    p.res.writeHead(answer.status, headers).end(Buffer.from(await answer.arrayBuffer()));
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const headers = Object.fromEntries(
        Object.entries(req.headers).flatMap(([k, v]) => (k === "host" || k === "connection" || v === undefined ? [] : [[k, String(v)]])),
      );
      const pending: Pending = { method: req.method ?? "GET", path: req.url ?? "/", headers, body: Buffer.concat(chunks), res };
      if (matches && !matches(pending)) {
        void forward(pending);
        return;
      }
      if (budget <= 0) {
        held.push(pending);
        waiters.forEach((w) => w());
        return;
      }
      budget--;
      void forward(pending);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    holdAfter: (count, match) => {
      budget = count;
      matches = match;
    },
    open: () => {
      budget = Infinity;
      matches = undefined;
    },
    held: () => held.length,
    waitForHeld: (count, timeoutMs = 30_000) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${count} held request(s) within ${timeoutMs} ms (held ${held.length})`)), timeoutMs);
        const check = () => {
          if (held.length < count) return;
          clearTimeout(timer);
          waiters = waiters.filter((w) => w !== check);
          resolve();
        };
        waiters.push(check);
        check();
      }),
    release: async () => {
      budget = Infinity;
      matches = undefined;
      await Promise.all(held.splice(0).map(forward));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Polls `check` every 20 ms until it returns true; fails after `timeoutMs` (an awaited condition, not a sleep). */
export async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
