import "server-only";
import { createVerify, X509Certificate } from "node:crypto";
import { safeFetch } from "@/lib/net/ssrf";

/**
 * Amazon SNS message signatures (SignatureVersion 1: SHA1withRSA, 2: SHA256withRSA) over the canonical string of the
 * message's fields, checked with the certificate at SigningCertURL — fetched only from
 * `https://sns.<region>.amazonaws.com/…pem` (any other address is refused before any request), at most
 * MAX_CERT_BYTES, and cached per URL.
 */
export type SnsMessage = {
  Type: "Notification" | "SubscriptionConfirmation" | "UnsubscribeConfirmation";
  MessageId: string;
  TopicArn: string;
  Message: string;
  Timestamp: string;
  SignatureVersion: string;
  Signature: string;
  SigningCertURL: string;
  Subject?: string;
  Token?: string;
  SubscribeURL?: string;
};

const SNS_HOST = /^sns\.[a-z]{2}(?:-[a-z]+)+-\d\.amazonaws\.com$/;
export const MAX_CERT_BYTES = 16 * 1024;
const CACHE_LIMIT = 20;

/** Whether `raw` is an address of SNS itself: https, host sns.<region>.amazonaws.com, default port. */
export function isSnsUrl(raw: string, pathSuffix?: string): boolean {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return false;
  }
  return url.protocol === "https:" && url.port === "" && !url.username && !url.password && SNS_HOST.test(url.hostname) &&
    (pathSuffix === undefined || url.pathname.endsWith(pathSuffix));
}

type Fetcher = (url: string) => Promise<string>;

/** The GET behind the host check: a bounded request through the shared SSRF guard. */
const httpsGet: Fetcher = async (url) => {
  const res = await safeFetch(url, { timeoutMs: 10_000, maxResponseBytes: MAX_CERT_BYTES, allowPrivate: false });
  if (res.status !== 200 || res.truncated) throw new Error(`SNS answered ${res.status}${res.truncated ? " (too large)" : ""}`);
  return res.body;
};
let fetcher: Fetcher = httpsGet;

/**
 * Tests only (NODE_ENV=test): answer SNS's addresses from a local stand-in. The host check still runs before it, so a
 * test cannot make a non-SNS address reachable either.
 */
export function setSnsFetcherForTests(replacement: Fetcher | undefined): void {
  if (process.env.NODE_ENV !== "test") throw new Error("setSnsFetcherForTests is for tests only");
  fetcher = replacement ?? httpsGet;
}

/** GET an SNS address (a certificate, a SubscribeURL); refused unless it is SNS's own. */
export async function getFromSns(url: string, pathSuffix?: string): Promise<string> {
  if (!isSnsUrl(url, pathSuffix)) throw new Error("not an Amazon SNS address");
  return fetcher(url);
}

const certificates = new Map<string, Promise<X509Certificate>>();

function certificate(url: string): Promise<X509Certificate> {
  let cert = certificates.get(url);
  if (!cert) {
    cert = getFromSns(url, ".pem").then((pem) => new X509Certificate(pem));
    if (certificates.size >= CACHE_LIMIT) certificates.delete(certificates.keys().next().value!);
    certificates.set(url, cert);
    cert.catch(() => certificates.delete(url));
  }
  return cert;
}

/** The canonical string SNS signs: the named fields in this order, each as "Name\nvalue\n", absent ones left out. */
export function stringToSign(m: SnsMessage): string {
  const fields = m.Type === "Notification"
    ? ["Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"]
    : ["Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type"];
  return fields.map((f) => {
    const value = (m as Record<string, unknown>)[f];
    return typeof value === "string" ? `${f}\n${value}\n` : "";
  }).join("");
}

/** Whether the message is SNS's, signed by the certificate at its SigningCertURL (which must be SNS's own address). */
export async function verifySnsMessage(m: SnsMessage): Promise<boolean> {
  const algorithm = m.SignatureVersion === "1" ? "RSA-SHA1" : m.SignatureVersion === "2" ? "RSA-SHA256" : undefined;
  if (!algorithm || typeof m.Signature !== "string" || !isSnsUrl(m.SigningCertURL, ".pem")) return false;
  let cert: X509Certificate;
  try {
    cert = await certificate(m.SigningCertURL);
  } catch {
    return false;
  }
  return createVerify(algorithm).update(stringToSign(m), "utf8").verify(cert.publicKey, m.Signature, "base64");
}
