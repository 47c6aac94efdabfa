/**
 * The one clock of the accounts code (token expiry, OTP life, refresh-token life, throttles), so tests can
 * move time instead of sleeping. Production never calls `setClock`.
 */
const realClock = () => Date.now();
let current: () => number = realClock;

export function now(): number {
  return current();
}

export function nowDate(): Date {
  return new Date(current());
}

/** Tests: install a clock (e.g. `() => fixed`), or pass nothing to restore the real one. */
export function setClock(clock?: () => number): void {
  current = clock ?? realClock;
}

/**
 * How far the installed clock is from the real one (0 in production): for statements that read the database's clock,
 * so that a test that moves time moves it there too.
 */
export function clockOffsetMs(): number {
  return current === realClock ? 0 : current() - Date.now();
}
