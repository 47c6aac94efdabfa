import "server-only";
import { createHash } from "node:crypto";

/** The limiter's key for a provider key: a hash (never the key), with the provider and address it is used with. */
export function limiterKey(settings: { provider: string; baseUrl: string | null; apiKey: string }): string {
  return "ai:" + createHash("sha256").update(`${settings.provider}\n${settings.baseUrl ?? ""}\n${settings.apiKey}`).digest("base64url").slice(0, 32);
}
