/** Cuts every array inside `value` to its first `max` elements (the run view); says whether anything was cut. */
export function truncateArrays(value: unknown, max: number): { value: unknown; truncated: boolean } {
  let truncated = false;
  const walk = (v: unknown, depth: number): unknown => {
    if (Array.isArray(v)) {
      if (v.length > max) truncated = true;
      return v.slice(0, max).map((x) => walk(x, depth + 1));
    }
    if (v && typeof v === "object" && depth < 32) {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[k] = walk(x, depth + 1);
      return out;
    }
    return v;
  };
  const result = walk(value, 0);
  return { value: result, truncated };
}
