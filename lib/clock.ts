/**
 * The one clock of the accounts code (token expiry, OTP life, refresh-token life, throttles), so tests can
 * move time instead of sleeping. Production never calls `setClock`.
 */
let current: () => number = () => Date.now();

export function now(): number {
  return current();
}

export function nowDate(): Date {
  return new Date(current());
}

/** Tests: install a clock (e.g. `() => fixed`), or pass nothing to restore the real one. */
export function setClock(clock?: () => number): void {
  current = clock ?? (() => Date.now());
}
