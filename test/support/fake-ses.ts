import { randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A local stand-in for Amazon SES's v2 JSON API, for tests that drive the real @aws-sdk/client-sesv2 (point an SES
 * sender at it with SES_ENDPOINT):
 *
 *   const ses = await startFakeSes({ maxSendRate: 14, max24HourSend: 50_000 });
 *   ses.emails                     // every accepted email: { messageId, from, to, raw, headerMessageId, at }
 *   ses.throttled                  // how many SendEmail calls answered TooManyRequestsException
 *   ses.reject("x@example.com")    // SendEmail to that address answers 400 MessageRejected
 *   ses.rejectFrom = true          // SendEmail answers MessageRejected "Email address is not verified … <from>"
 *   ses.maxSendRate = 3            // from now on, calls beyond 3 per second are throttled (reset() restores it)
 *   await ses.close();
 *
 * `maxSendRate`: SendEmail calls beyond that many within any one-second window answer 429 TooManyRequestsException
 * ("Maximum sending rate exceeded."), as SES does. GET /v2/email/account answers the SendQuota.
 */
export type FakeSesEmail = { messageId: string; from: string; to: string[]; raw: string; headerMessageId?: string; at: number };

export type FakeSes = {
  url: string;
  emails: FakeSesEmail[];
  readonly throttled: number;
  readonly calls: number;
  reject(address: string): void;
  rejectFrom: boolean;
  /** Calls per second SES accepts (changeable; GetAccount keeps answering the rate given at start). */
  maxSendRate?: number;
  /** Holds each SendEmail answer (accepted already) until release(): a call under way. */
  hold: boolean;
  readonly held: number;
  release(): void;
  reset(): void;
  close(): Promise<void>;
};

export async function startFakeSes(options: { maxSendRate?: number; max24HourSend?: number } = {}): Promise<FakeSes> {
  const recent: number[] = [];
  const rejected = new Set<string>();
  const waiting: (() => void)[] = [];
  const state = { throttled: 0, calls: 0 };
  const emails: FakeSesEmail[] = [];
  const fake = {
    rejectFrom: false,
    hold: false,
    maxSendRate: options.maxSendRate,
  };
  const answer = (res: http.ServerResponse, status: number, body: unknown, errorType?: string) => {
    res.writeHead(status, { "content-type": "application/json", ...(errorType ? { "x-amzn-errortype": errorType } : {}) });
    res.end(JSON.stringify(body));
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const path = (req.url ?? "").split("?")[0];
      if (req.method === "GET" && path === "/v2/email/account") {
        return answer(res, 200, {
          SendQuota: { MaxSendRate: options.maxSendRate ?? 14, Max24HourSend: options.max24HourSend ?? 50_000, SentLast24Hours: emails.length },
          SendingEnabled: true,
          ProductionAccessEnabled: true,
        });
      }
      if (req.method !== "POST" || path !== "/v2/email/outbound-emails") return answer(res, 404, { message: "Not found" }, "NotFoundException");
      state.calls++;
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as {
        FromEmailAddress?: string;
        Destination?: { ToAddresses?: string[] };
        Content?: { Raw?: { Data?: string } };
      };
      const now = Date.now();
      while (recent.length && recent[0] <= now - 1000) recent.shift();
      if (fake.maxSendRate !== undefined && recent.length >= fake.maxSendRate) {
        state.throttled++;
        return answer(res, 429, { message: "Maximum sending rate exceeded." }, "TooManyRequestsException");
      }
      recent.push(now);
      const to = body.Destination?.ToAddresses ?? [];
      const from = body.FromEmailAddress ?? "";
      if (fake.rejectFrom) {
        return answer(res, 400, { message: `Email address is not verified. The following identities failed the check in region EU-WEST-1: ${from}` }, "MessageRejected");
      }
      if (to.some((a) => rejected.has(a.toLowerCase()))) {
        return answer(res, 400, { message: `Address blacklisted: ${to[0]}` }, "MessageRejected");
      }
      const raw = Buffer.from(body.Content?.Raw?.Data ?? "", "base64").toString("utf8");
      const headerMessageId = /^Message-ID:\s*(.+)$/im.exec(raw.split(/\r?\n\r?\n/)[0] ?? "")?.[1]?.trim();
      const messageId = `0100-${randomUUID()}-000000`;
      emails.push({ messageId, from, to, raw, headerMessageId, at: now });
      const reply = () => answer(res, 200, { MessageId: messageId });
      if (fake.hold) waiting.push(reply);
      else reply();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const api = Object.assign(fake, {
    url: `http://127.0.0.1:${port}`,
    emails,
    reject: (address: string) => void rejected.add(address.toLowerCase()),
    release: () => waiting.splice(0).forEach((f) => f()),
    reset() {
      emails.length = 0;
      rejected.clear();
      recent.length = 0;
      state.throttled = 0;
      state.calls = 0;
      fake.rejectFrom = false;
      fake.hold = false;
      fake.maxSendRate = options.maxSendRate;
      waiting.splice(0).forEach((f) => f());
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  });
  // Counters read live (Object.assign would copy a getter's value once).
  Object.defineProperties(api, {
    throttled: { get: () => state.throttled },
    calls: { get: () => state.calls },
    held: { get: () => waiting.length },
  });
  return api as unknown as FakeSes;
}
