import "server-only";
import { createHash } from "node:crypto";
import net from "node:net";
import nodemailer from "nodemailer";
import { providerErrorText } from "@/lib/net/provider-message";
import { messageIdFor } from "./message-id";
import { oneCallPerEmail } from "./one-call-per-email";
import { EmailSendError, type EmailSender, type OutgoingEmail, type SendResult } from "./types";

export type SmtpOptions = {
  host: string;
  port: number;
  secure: boolean;
  username?: string;
  password?: string;
  from: string;
  replyTo?: string;
  /** Open connections of the pool (nodemailer's); each carries one email at a time. */
  maxConnections?: number;
  /**
   * The address `host` resolved to when the SSRF guard checked it: the pool connects there and nowhere else, whatever
   * DNS answers later, and TLS still verifies the certificate against `host`.
   */
  pinnedAddress?: string;
};

/** Connections kept open per SMTP sender: enough to carry tens of emails a second over a high-latency link. */
export const SMTP_POOL_CONNECTIONS = 5;
/** Per-command timeouts: a server that stops answering is a connection error (waited out), not a hung node. */
const TIMEOUTS = { connectionTimeout: 15_000, greetingTimeout: 15_000, socketTimeout: 60_000 };

/** The limiter key of an SMTP server and user: a hash, so neither is stored in the limiter's table. */
export function smtpPacingKey(host: string, port: number, username?: string): string {
  return `smtp:${createHash("sha256").update(`${host.toLowerCase()}\u0000${port}\u0000${username ?? ""}`).digest("base64url").slice(0, 22)}`;
}

/**
 * An SMTP transport through nodemailer's connection pool. One call per email (`perEmail`): SMTP has no idempotency
 * key, so OUTPUT records each email `sending` before its call. Every email carries a Message-ID derived from its
 * idempotency key. Errors become EmailSendError (see smtpError). `close()` ends the pool's connections.
 */
export function createSmtpSender(options: SmtpOptions): EmailSender & { close(): void } {
  const transporter = nodemailer.createTransport({
    pool: true,
    // Without `secure`, the password goes only after STARTTLS: a server (or someone in between) that does not offer it
    // is refused rather than sent the password in clear. A server on this machine may be plain (a local relay).
    requireTLS: !options.secure && options.username !== undefined && !isLocalHost(options.host),
    host: options.pinnedAddress ?? options.host,
    ...(options.pinnedAddress && options.pinnedAddress !== options.host ? { tls: { servername: options.host } } : {}),
    port: options.port,
    secure: options.secure,
    maxConnections: options.maxConnections ?? SMTP_POOL_CONNECTIONS,
    ...(options.username ? { auth: { user: options.username, pass: options.password ?? "" } } : {}),
    ...TIMEOUTS,
    getSocket: (socketOptions: { host?: string; port?: number }, callback: SocketCallback) =>
      openNoDelaySocket(socketOptions.host ?? options.host, socketOptions.port ?? options.port, callback),
  } as Parameters<typeof nodemailer.createTransport>[0]);
  const send = async (email: OutgoingEmail): Promise<SendResult> => {
    const messageId = email.idempotencyKey ? messageIdFor(email.idempotencyKey) : undefined;
    try {
      const info = await transporter.sendMail({
        from: options.from,
        to: email.to,
        subject: email.subject,
        text: email.text ?? (email.html === undefined ? "" : undefined),
        html: email.html,
        replyTo: email.replyTo ?? options.replyTo,
        headers: email.headers,
        ...(messageId ? { messageId } : {}),
      });
      if (info.rejected.length > 0) {
        throw new EmailSendError(providerErrorText("SMTP", 550, `the server refused ${email.to}`), false, undefined, { refused: "recipient", status: 550 });
      }
      return { id: info.messageId ?? messageId ?? "" };
    } catch (error) {
      throw smtpError(error);
    }
  };
  return {
    name: "smtp",
    perEmail: true,
    pacingMargin: 1,
    pacingKey: smtpPacingKey(options.host, options.port, options.username),
    send,
    ...oneCallPerEmail(send),
    close: () => transporter.close(),
  };
}

/** localhost or a loopback address, as the sender's host was written. */
export function isLocalHost(host: string): boolean {
  const bare = host.toLowerCase().replace(/^\[|\]$/g, "");
  return bare === "localhost" || bare.endsWith(".localhost") || bare === "::1" || /^127(\.\d{1,3}){3}$/.test(bare);
}

type SocketCallback = (error: Error | null, socketOptions?: { connection: net.Socket }) => void;

/**
 * Opens the pool's TCP connections itself, with Nagle's algorithm off. nodemailer leaves it on, and an SMTP exchange is
 * a series of small writes each waiting for an answer: with Nagle's algorithm and the server's delayed ACK every
 * command waits ~40 ms, which held one connection to ~22 emails a second (110/s for the pool) however fast the server.
 * nodemailer then speaks SMTP on the connected socket, upgrading it to TLS first for `secure` senders.
 */
function openNoDelaySocket(host: string, port: number, callback: SocketCallback): void {
  const socket = net.connect({ host, port });
  socket.setNoDelay(true);
  let settled = false;
  const settle = (error: Error | null) => {
    if (settled) return;
    settled = true;
    socket.setTimeout(0);
    if (error) {
      socket.destroy();
      callback(error);
    } else callback(null, { connection: socket });
  };
  socket.setTimeout(TIMEOUTS.connectionTimeout, () =>
    settle(Object.assign(new Error(`connection to ${host}:${port} timed out`), { code: "ETIMEDOUT" })),
  );
  // Kept for the socket's life (settle ignores later calls): nodemailer listens while it uses the connection, and a
  // reset arriving after it let go of a socket it did not open must not become an uncaught exception.
  socket.on("error", settle);
  socket.once("connect", () => settle(null));
}

type NodemailerError = { code?: string; responseCode?: number; command?: string; response?: string; message?: string };

/** Reply codes a server uses to say "not now" (RFC 5321: 421 closing, 450/451/452 busy or out of room, 454 TLS/auth). */
const THROTTLING = new Set([421, 450, 451, 452, 454]);
const CONNECTION = new Set(["ECONNECTION", "ETIMEDOUT", "ESOCKET", "EDNS", "ECONNRESET", "ECONNREFUSED", "EPIPE"]);

/**
 * What an SMTP failure means for the email:
 * - throttling replies, other 4xx and connection failures: wait and try again (`throttled`, retryable);
 * - no STARTTLS where the password must go encrypted (ETLS), authentication refused (EAUTH, 530/534/535), or a 5xx to MAIL FROM (the from address refused): the sender itself
 *   is refused, the node fails;
 * - any other 5xx (to RCPT TO: the recipient; to DATA: this message): that email is refused, the node goes on;
 * - anything else fails the node with the server's sentence.
 */
export function smtpError(error: unknown): EmailSendError {
  if (error instanceof EmailSendError) return error;
  const e = (error ?? {}) as NodemailerError;
  const fromResponse = typeof e.response === "string" ? Number(/^\d{3}/.exec(e.response)?.[0]) : NaN;
  const code = typeof e.responseCode === "number" ? e.responseCode : Number.isFinite(fromResponse) ? fromResponse : undefined;
  const message = providerErrorText("SMTP", code ?? e.code, e.response ?? e.message ?? "unknown error");
  if (e.code === "ETLS" || /STARTTLS/i.test(e.command ?? "")) {
    const text = providerErrorText("SMTP", code ?? e.code, `the server does not offer STARTTLS, and the password is only sent encrypted (use secure on port 465, or a server that offers STARTTLS): ${e.response ?? e.message ?? ""}`.trim());
    return new EmailSendError(text, false, undefined, { refused: "sender", status: code ?? null });
  }
  if (e.code === "EAUTH" || code === 530 || code === 534 || code === 535) {
    return new EmailSendError(message, false, undefined, { refused: "sender", status: code ?? null });
  }
  if (code !== undefined && code >= 500) {
    const sender = /MAIL FROM/i.test(e.command ?? "");
    return new EmailSendError(message, false, undefined, { refused: sender ? "sender" : "recipient", status: code });
  }
  if ((code !== undefined && code >= 400) || CONNECTION.has(e.code ?? "")) {
    return new EmailSendError(message, true, undefined, { throttled: code !== undefined && THROTTLING.has(code), status: code ?? null });
  }
  // Anything else (a malformed message, an unexpected reply) would fail again: the node fails with its sentence.
  return new EmailSendError(message, false, undefined, { status: code ?? null });
}

/** `smtp://user:pass@host:port` or `smtps://…` (SMTP_URL) as transport options. */
export function parseSmtpUrl(raw: string): Omit<SmtpOptions, "from"> {
  const url = new URL(raw);
  const secure = url.protocol === "smtps:";
  if (!secure && url.protocol !== "smtp:") throw new Error("SMTP_URL must start with smtp:// or smtps://");
  return {
    host: url.hostname,
    port: url.port ? Number(url.port) : secure ? 465 : 587,
    secure,
    username: url.username ? decodeURIComponent(url.username) : undefined,
    password: url.password ? decodeURIComponent(url.password) : undefined,
  };
}
