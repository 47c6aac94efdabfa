import "server-only";
import { sql, type SQL } from "drizzle-orm";

// The rules that decide whether a credential still opens its account, as SQL fragments: the one definition that the
// request's account lookup (authenticate.ts, api-keys.ts) and the enqueue statement, which checks the account in the
// statement that inserts the run, both use. tokenOpensAccount and apiKeyOpensAccount decide; the other fragments name
// the reason a lookup reports. `account` and `key` name rows of `accounts` and `api_keys`.

/** The account's email address is verified (an unverified account signs in to nothing). */
export function accountVerified(account: SQL): SQL {
  return sql`(${account}.email_verified_at is not null)`;
}

/**
 * No password change since the credential was issued at `issuedAtMs` (milliseconds): credentials issued up to the
 * instant of the last change are refused (the boundary itself counts as "before").
 */
export function passwordUnchangedSince(account: SQL, issuedAtMs: SQL): SQL {
  return sql`(${account}.password_changed_at is null or floor(extract(epoch from ${account}.password_changed_at) * 1000) < ${issuedAtMs})`;
}

export function apiKeyRevoked(key: SQL): SQL {
  return sql`(${key}.revoked_at is not null)`;
}

export function apiKeyExpired(key: SQL): SQL {
  return sql`(${key}.expires_at is not null and ${key}.expires_at <= now())`;
}

/** The key's last use is recorded at most about once a minute. */
export function apiKeyUseStale(key: SQL): SQL {
  return sql`(${key}.last_used_at is null or ${key}.last_used_at < now() - interval '1 minute')`;
}

/**
 * A person's access token (or session) issued at `issuedAtMs` still opens `account`: the account is verified and its
 * password unchanged since. The request's lookup reports which of the two failed; this is what decides.
 */
export function tokenOpensAccount(account: SQL, issuedAtMs: SQL): SQL {
  return sql`(${accountVerified(account)} and ${passwordUnchangedSince(account, issuedAtMs)})`;
}

/**
 * An API key still opens its account: the key's row is there (false for a left join that found none), its account
 * is verified, and the key is neither revoked nor expired. The request's lookup reports which failed; this decides.
 */
export function apiKeyOpensAccount(account: SQL, key: SQL): SQL {
  return sql`(${key}.id is not null and ${accountVerified(account)} and not ${apiKeyRevoked(key)} and not ${apiKeyExpired(key)})`;
}
