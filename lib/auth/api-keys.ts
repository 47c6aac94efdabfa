import "server-only";
import { createHmac, hkdfSync, randomBytes } from "node:crypto";
import { sql } from "drizzle-orm";
import { after } from "next/server";
import { execRows, getDb } from "@/db/client";
import { getConfig } from "@/lib/config";
import { AppError } from "@/lib/errors";
import { log } from "@/lib/log";
import { API_KEY_PREFIX, type ApiKeyScope } from "@/lib/schemas/api-keys";
import { accountVerified, apiKeyExpired, apiKeyOpensAccount, apiKeyRevoked, apiKeyUseStale } from "./account-check";

const A = sql.raw("a");
const K = sql.raw("k");

/** What a request made with an API key may do: fixed when the key was created. */
export type ApiKeyGrant = { id: string; scopes: readonly ApiKeyScope[]; workflowIds: readonly string[] | null };

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/** 256 bits in base62 take at most 43 characters; shorter numbers are left-padded so every key has one length. */
const KEY_BODY_LENGTH = 43;
const KEY_PATTERN = new RegExp(`^${API_KEY_PREFIX}[0-9A-Za-z]{${KEY_BODY_LENGTH}}$`);
/** `fmk_` and the first 8 characters: enough to tell keys apart, far too few to guess the rest. */
const PREFIX_LENGTH = API_KEY_PREFIX.length + 8;

/** A new key: `fmk_` + 256 bits from the CSPRNG in base62. */
export function generateApiKey(): { key: string; prefix: string; hash: string } {
  let n = BigInt(`0x${randomBytes(32).toString("hex")}`);
  let body = "";
  while (n > 0n) {
    body = BASE62[Number(n % 62n)] + body;
    n /= 62n;
  }
  const key = API_KEY_PREFIX + body.padStart(KEY_BODY_LENGTH, "0");
  return { key, prefix: key.slice(0, PREFIX_LENGTH), hash: hashApiKey(key) };
}

/** A bearer value in the key's form goes to the key lookup; anything else is a person's access token. */
export function isApiKeyToken(token: string): boolean {
  return token.startsWith(API_KEY_PREFIX);
}

let hmacKey: { secret: string; key: Buffer } | undefined;

/**
 * The stored form of a key: HMAC-SHA-256 under a key derived from AUTH_SECRET for this use only, so a copy of the
 * table alone cannot check guesses. A fast hash is right here: the key has 256 random bits, nothing to brute-force.
 */
function hashApiKey(key: string): string {
  const secret = getConfig().authSecret;
  if (hmacKey?.secret !== secret) {
    hmacKey = { secret, key: Buffer.from(hkdfSync("sha256", secret, "flowmail", "api-key-hash-v1", 32)) };
  }
  return createHmac("sha256", hmacKey.key).update(key).digest("base64url");
}

export type ApiKeyAccount = { id: string; email: string; fullName: string; apiKey: ApiKeyGrant };

type KeyRow = {
  id: string;
  account_id: string;
  scopes: string[];
  workflow_ids: string[] | null;
  expired: boolean;
  revoked: boolean;
  opens: boolean;
  last_used_stale: boolean;
  email: string;
  full_name: string;
  verified: boolean;
};

/**
 * The account behind a key, in one indexed lookup (the key's HMAC is unique), the same cost as the account lookup a
 * person's access token makes. Nothing is cached here: a key revoked on any instance fails on the very next request.
 * Throws 401 `invalid_token` for an unknown, malformed, revoked or expired key.
 */
export async function accountForApiKey(token: string): Promise<ApiKeyAccount> {
  if (!KEY_PATTERN.test(token)) throw invalidKey("The API key is not valid.");
  const db = await getDb();
  const [row] = await execRows<KeyRow>(
    db,
    sql`select k.id, k.account_id, k.scopes, k.workflow_ids,
               ${apiKeyOpensAccount(A, K)} as opens,
               ${apiKeyExpired(K)} as expired,
               ${apiKeyRevoked(K)} as revoked,
               ${apiKeyUseStale(K)} as last_used_stale,
               a.email, a.full_name, ${accountVerified(A)} as verified
        from api_keys k join accounts a on a.id = k.account_id
        where k.key_hash = ${hashApiKey(token)}`,
  );
  if (!row?.opens) {
    // Refused: why, in this order (an unverified account's keys are "not valid").
    if (!row || !row.verified) throw invalidKey("The API key is not valid.");
    if (row.revoked) throw invalidKey("The API key was revoked.");
    if (row.expired) throw invalidKey("The API key has expired: create a new one.");
    throw invalidKey("The API key is not valid.");
  }
  const grant: ApiKeyGrant = { id: row.id, scopes: row.scopes as ApiKeyScope[], workflowIds: row.workflow_ids };
  remember(token, { accountId: row.account_id, grant });
  if (row.last_used_stale) touchLastUsed(row.id);
  return { id: row.account_id, email: row.email, fullName: row.full_name, apiKey: grant };
}

function invalidKey(detail: string): AppError {
  return new AppError("invalid_token", detail);
}

/**
 * Records the key's use after the response, at most about once a minute per key (the lookup says when it is due),
 * so a busy key does not turn every request into a write.
 */
export function touchLastUsed(keyId: string): void {
  const work = async () => {
    const db = await getDb();
    await db.execute(
      sql`update api_keys set last_used_at = now() where id = ${keyId} and ${apiKeyUseStale(sql.raw("api_keys"))}`,
    );
  };
  const run = () => work().catch((error: unknown) => log.warn("recording an API key's last use failed", { keyId, error }));
  try {
    after(run);
  } catch {
    // Outside a request (tests calling services directly) there is no response to wait for.
    void run();
  }
}

/**
 * The parts of a key that never change — its account, scopes and workflows — by its HMAC, for the enqueue hot path,
 * which checks the account inside its one statement and needs the account id before it. A remembered key is never
 * trusted alone: that statement checks that the key is still neither revoked nor expired, on every request.
 */
const remembered = new Map<string, { accountId: string; grant: ApiKeyGrant }>();
const REMEMBERED_MAX = 10_000;

function remember(token: string, facts: { accountId: string; grant: ApiKeyGrant }): void {
  const hash = hashApiKey(token);
  if (remembered.has(hash)) return;
  if (remembered.size >= REMEMBERED_MAX) remembered.delete(remembered.keys().next().value!);
  remembered.set(hash, facts);
}

/** The fixed facts of a key seen before on this instance, or null (then authenticate it in full first). */
export function rememberedApiKey(token: string): { accountId: string; grant: ApiKeyGrant } | null {
  if (!KEY_PATTERN.test(token)) return null;
  return remembered.get(hashApiKey(token)) ?? null;
}
