import { EventEmitter, once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

// A local webhook endpoint that checks every request with the `standardwebhooks` package (as an integrator
// would) and answers with scripted status codes.

export type ReceivedWebhook = {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The verified payload, or null when the signature check failed. */
  payload: unknown;
  verifyError: string | null;
  answeredStatus: number;
};

export type WebhookReceiver = {
  url: string;
  received: ReceivedWebhook[];
  /** Status codes for the next requests, in order; once used up, 200. */
  script: number[];
  /** Answers with a redirect to this URL when set. */
  redirectTo: string | null;
  /** The signing secret deliveries are verified with. */
  secret: string | null;
  /** Resolves with the next request received. */
  next(): Promise<ReceivedWebhook>;
  close(): Promise<void>;
};

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const events = new EventEmitter();
  const receiver: Omit<WebhookReceiver, "url" | "close"> = {
    received: [],
    script: [],
    redirectTo: null,
    secret: null,
    next: () => once(events, "request").then(([r]) => r as ReceivedWebhook),
  };
  const server = http.createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (body += chunk));
    req.on("end", () => {
      let payload: unknown = null;
      let verifyError: string | null = null;
      try {
        payload = new Webhook(receiver.secret ?? "").verify(body, req.headers as Record<string, string>);
      } catch (error) {
        verifyError = (error as Error).message;
      }
      const status = receiver.redirectTo ? 307 : (receiver.script.shift() ?? 200);
      const entry = { path: req.url ?? "/", headers: req.headers, body, payload, verifyError, answeredStatus: status };
      receiver.received.push(entry);
      if (receiver.redirectTo) res.writeHead(status, { location: receiver.redirectTo }).end();
      else res.writeHead(status, { "content-type": "text/plain" }).end(status >= 300 ? `failure ${status}` : "ok");
      events.emit("request", entry);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/flowmail`;
  return Object.assign(receiver, {
    url,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  });
}
