// Measuring a value's JSON text before building it: expressions and templates turn objects and lists into JSON, and
// an upstream node's whole output can be a 100,000-row upload. JSON.stringify would build all of it first; this walk
// stops as soon as the text would pass the limit, so the work done is bounded by the limit, not by the value.

/** Characters of text that cost one unit of work when an expression scans or builds text. */
export const CHARS_PER_WORK_UNIT = 32;

/**
 * The length of `JSON.stringify(value)` (exact but for escapes), or `Infinity` once it passes `limit` (the walk
 * stops there).
 * `onVisit` is told of every value visited (the caller charges its work budget with it).
 */
export function jsonLengthWithin(value: unknown, limit: number, onVisit?: (units: number) => void): number {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const current = stack.pop();
    onVisit?.(1);
    if (typeof current === "string") {
      // Escapes at most double a character (\n, \", \\); a control character becomes six (\u0001): rare, and the
      // real text is measured again after it is built.
      total += current.length + 2;
      onVisit?.(Math.floor(current.length / CHARS_PER_WORK_UNIT));
    } else if (Array.isArray(current)) {
      total += 2 + current.length;
      for (let i = current.length - 1; i >= 0; i--) stack.push(current[i]);
    } else if (current !== null && typeof current === "object") {
      const keys = Object.keys(current);
      total += 2 + keys.length;
      for (const key of keys) {
        total += key.length + 3;
        stack.push((current as Record<string, unknown>)[key]);
      }
    } else {
      total += 24; // numbers, booleans, null
    }
    if (total > limit) return Infinity;
  }
  return total;
}

/** `JSON.stringify(value)` when its text stays within `limit` characters; undefined otherwise (nothing large built). */
export function stringifyWithin(value: unknown, limit: number, onVisit?: (units: number) => void): string | undefined {
  if (jsonLengthWithin(value, limit * 2, onVisit) === Infinity) return undefined;
  const text = JSON.stringify(value) ?? "";
  return text.length > limit ? undefined : text;
}
