import type { Db } from "./client";

/**
 * What this process keeps per database handle (a statement's group commit, the leases it renews), by name. Kept on
 * globalThis, so that a dev server's reload, which evaluates a module again, finds the state already there (its
 * batches in flight, its timer) instead of starting a second copy beside the first; weakly keyed, so a closed handle's
 * state goes with it.
 */
const slot = globalThis as unknown as { __flowmailDbState?: WeakMap<Db, Map<string, unknown>> };

export function dbState<T>(db: Db, name: string, create: () => T): T {
  const states = (slot.__flowmailDbState ??= new WeakMap());
  let mine = states.get(db);
  if (!mine) states.set(db, (mine = new Map()));
  if (!mine.has(name)) mine.set(name, create());
  return mine.get(name) as T;
}
