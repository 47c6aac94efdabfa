import "server-only";
import { clientAddress } from "@/lib/auth/client-address";
import { getConfig } from "@/lib/config";
import { assertWithinLimit, consumeRateLimit } from "@/lib/rate-limit";

export const REGISTRATION_WINDOW_SECONDS = 3600;

/**
 * Every sign-up emails a code to an address its sender chose, so sign-ups are limited per client address and across
 * all clients (sliding hour, one atomic increment-and-check each, like the sign-in throttle). Every attempt counts,
 * taken or not: answering `email_taken` for free would also make the endpoint a fast address-probing oracle. A hit
 * refused by the global limit is handed back to the client's counter (it sent nothing).
 */
export async function takeRegistrationSlot(req: Request | undefined, now: number): Promise<void> {
  const config = getConfig();
  const address = req ? clientAddress(req) : null;
  const perClient = address
    ? await consumeRateLimit(`register-addr:${address}`, config.registrationAddressLimit, REGISTRATION_WINDOW_SECONDS, now)
    : null;
  if (perClient) assertWithinLimit(perClient, "Too many sign-ups from your network: try again later.");
  const global = await consumeRateLimit("register-global", config.registrationGlobalLimit, REGISTRATION_WINDOW_SECONDS, now);
  if (!global.allowed) {
    await perClient?.refund();
    assertWithinLimit(global, "Sign-ups are paused for a while because of unusual volume: try again later.");
  }
}
