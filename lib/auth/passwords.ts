import "server-only";
import { hash, verify } from "@node-rs/argon2";

/**
 * argon2id with OWASP's second recommended parameter set (19 MiB, 2 passes, 1 lane). A hash carries its parameters, so
 * verification follows the stored hash. Tests whose subject is not the hash's cost lower it (throttles count attempts).
 */
export const passwordHashPolicy = { memoryCost: 19_456, timeCost: 2, parallelism: 1 };

export function hashPassword(password: string): Promise<string> {
  // algorithm 2: Algorithm.Argon2id (an ambient const enum, not importable under isolatedModules).
  return hash(password, { algorithm: 2, ...passwordHashPolicy });
}

/** False (never a throw) for a wrong password or an unreadable stored hash. */
export async function verifyPassword(storedHash: string, password: string): Promise<boolean> {
  try {
    return await verify(storedHash, password);
  } catch {
    return false;
  }
}

let dummyHash: Promise<string> | undefined;

/**
 * Verifies against a hash of a random password, so an unknown email costs the same time as a wrong
 * password and the two answers cannot be told apart by timing.
 */
export async function burnPasswordCheck(password: string): Promise<false> {
  dummyHash ??= hashPassword(`dummy-${Math.random()}-${Date.now()}`);
  await verifyPassword(await dummyHash, password);
  return false;
}
