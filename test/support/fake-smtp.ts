import { SMTPServer, type SMTPServerAddress, type SMTPServerSession } from "smtp-server";
import type { AddressInfo } from "node:net";

/**
 * A local SMTP server (smtp-server) for tests that drive the real nodemailer:
 *
 *   const smtp = await startFakeSmtp();            // listens on 127.0.0.1, port 0; no TLS, AUTH optional
 *   smtp.port; smtp.messages                        // every accepted message: { from, to, raw, messageId, subject }
 *   smtp.connections / smtp.open / smtp.maxOpen     // connections ever opened / open now / most open at once (since reset)
 *   smtp.authenticated                              // AUTH commands received (since reset)
 *   smtp.refuse("bad@example.com")                  // RCPT TO that address answers 550 (permanent)
 *   smtp.throttleNext(3)                            // the next 3 MAIL FROM answer 421 (try later)
 *   smtp.requireAuth("user", "pass")                // AUTH required; a wrong password answers 535
 *   smtp.holdMessages(true)                         // DATA is not answered until release() (a call under way)
 *   smtp.holdAfter(50)                              // the first 50 messages are answered, later ones held
 *   await smtp.close();
 */
export type FakeSmtpMessage = { from: string; to: string[]; raw: string; messageId?: string; subject?: string };

export type FakeSmtp = {
  port: number;
  url: string;
  messages: FakeSmtpMessage[];
  readonly connections: number;
  readonly maxOpen: number;
  readonly authenticated: number;
  readonly open: number;
  refuse(address: string): void;
  throttleNext(n: number): void;
  requireAuth(user: string, pass: string): void;
  holdMessages(hold: boolean): void;
  holdAfter(n: number): void;
  /** Messages whose DATA is held (received, not yet answered). */
  readonly held: number;
  release(): void;
  reset(): void;
  close(): Promise<void>;
};

export async function startFakeSmtp(): Promise<FakeSmtp> {
  const refused = new Set<string>();
  let throttle = 0;
  let auth: { user: string; pass: string } | undefined;
  let hold = false;
  let holdFrom = Number.POSITIVE_INFINITY;
  const waiting: (() => void)[] = [];
  const state = { connections: 0, open: 0, maxOpen: 0, authenticated: 0 };
  const messages: FakeSmtpMessage[] = [];

  const server = new SMTPServer({
    secure: false,
    disabledCommands: ["STARTTLS"],
    authOptional: true,
    logger: false,
    size: 10 * 1024 * 1024,
    // close() answers connections still open (an idle pool's) with 421 after this long: smtp-server's default, 30 s,
    // was most of the time of every test file that sends through SMTP.
    closeTimeout: 100,
    onConnect(_session, callback) {
      state.connections++;
      state.open++;
      state.maxOpen = Math.max(state.maxOpen, state.open);
      callback();
    },
    onClose() {
      state.open--;
    },
    onAuth(a, _session, callback) {
      state.authenticated++;
      if (auth && a.username === auth.user && a.password === auth.pass) return callback(null, { user: a.username });
      if (!auth) return callback(null, { user: a.username });
      const error = Object.assign(new Error("Authentication credentials invalid"), { responseCode: 535 });
      callback(error);
    },
    onMailFrom(_address: SMTPServerAddress, session: SMTPServerSession, callback) {
      if (auth && !session.user) return callback(Object.assign(new Error("Authentication required"), { responseCode: 530 }));
      if (throttle > 0) {
        throttle--;
        return callback(Object.assign(new Error("Too many messages, slow down"), { responseCode: 421 }));
      }
      callback();
    },
    onRcptTo(address, _session, callback) {
      if (refused.has(address.address.toLowerCase())) {
        return callback(Object.assign(new Error(`Mailbox ${address.address} does not exist`), { responseCode: 550 }));
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        const raw = Buffer.concat(chunks).toString("utf8");
        const header = (name: string) => new RegExp(`^${name}:\\s*(.+)$`, "im").exec(raw.split(/\r?\n\r?\n/)[0] ?? "")?.[1]?.trim();
        const accept = () => {
          messages.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
            to: session.envelope.rcptTo.map((r) => r.address),
            raw,
            messageId: header("Message-ID"),
            subject: header("Subject"),
          });
          callback(null, "Queued");
        };
        if (hold || messages.length + waiting.length >= holdFrom) waiting.push(accept);
        else accept();
      });
    },
  });
  // smtp-server emits a client's vanishing mid-message (ECONNRESET during DATA: a killed sender process, which is what
  // the fault tests do) as the server's 'error': without a listener that is an uncaught exception.
  server.on("error", () => undefined);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = ((server as unknown as { server: { address(): AddressInfo } }).server.address()).port;
  return {
    port,
    url: `smtp://127.0.0.1:${port}`,
    messages,
    get connections() {
      return state.connections;
    },
    get maxOpen() {
      return state.maxOpen;
    },
    get authenticated() {
      return state.authenticated;
    },
    get open() {
      return state.open;
    },
    get held() {
      return waiting.length;
    },
    refuse: (address) => void refused.add(address.toLowerCase()),
    throttleNext: (n) => void (throttle = n),
    requireAuth: (user, pass) => void (auth = { user, pass }),
    holdMessages: (h) => void (hold = h),
    holdAfter: (n) => void (holdFrom = n),
    release: () => waiting.splice(0).forEach((f) => f()),
    reset() {
      messages.length = 0;
      refused.clear();
      throttle = 0;
      auth = undefined;
      hold = false;
      holdFrom = Number.POSITIVE_INFINITY;
      waiting.splice(0).forEach((f) => f());
      state.maxOpen = state.open;
      state.authenticated = 0;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
