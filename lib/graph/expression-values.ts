// Value semantics of the expression language: the contract's comparison rules and truthiness.
const hasOwn = Object.prototype.hasOwnProperty;

/** A number, or a string that reads fully as a finite number; otherwise undefined. */
export function asNumber(value: unknown): number | undefined {
  if (typeof value === "number") return value;
  if (typeof value !== "string" || value === "") return undefined;
  const number = Number(value);
  if (number !== number || number === Infinity || number === -Infinity) return undefined;
  if (number === 0 && value.trim() === "") return undefined;
  return number;
}

function asBooleanString(value: string): boolean | undefined {
  const lowered = value.trim().toLowerCase();
  return lowered === "true" ? true : lowered === "false" ? false : undefined;
}

/** The language's `==`. */
export function looseEquals(left: unknown, right: unknown): boolean {
  if (left === right) return true;
  if (left === null || left === undefined || right === null || right === undefined) {
    return (left === null || left === undefined) && (right === null || right === undefined);
  }
  const leftType = typeof left;
  const rightType = typeof right;
  if (leftType === "number" && rightType === "string") return asNumber(right) === left;
  if (leftType === "string" && rightType === "number") return asNumber(left) === right;
  if (leftType === "boolean" && rightType === "string") return asBooleanString(right as string) === left;
  if (leftType === "string" && rightType === "boolean") return asBooleanString(left as string) === right;
  if (Array.isArray(left) && Array.isArray(right)) {
    return left.length === right.length && left.every((value, i) => looseEquals(value, right[i]));
  }
  if (leftType === "object" && rightType === "object" && !Array.isArray(left) && !Array.isArray(right)) {
    const leftKeys = Object.keys(left as object);
    const rightRecord = right as Record<string, unknown>;
    return (
      leftKeys.length === Object.keys(rightRecord).length &&
      leftKeys.every((key) => hasOwn.call(rightRecord, key) && looseEquals((left as Record<string, unknown>)[key], rightRecord[key]))
    );
  }
  return false;
}

/** `<`-style ordering: a negative, zero or positive number, or undefined when the two cannot be ordered. */
export function order(left: unknown, right: unknown): number | undefined {
  if (typeof left === "string" && typeof right === "string") {
    const leftNumber = asNumber(left);
    const rightNumber = asNumber(right);
    if (leftNumber !== undefined && rightNumber !== undefined) return leftNumber - rightNumber;
    return left < right ? -1 : left > right ? 1 : 0;
  }
  const leftNumber = asNumber(left);
  const rightNumber = asNumber(right);
  if (leftNumber === undefined || rightNumber === undefined) return undefined;
  return leftNumber - rightNumber;
}

export function isTruthy(value: unknown): boolean {
  if (typeof value === "boolean") return value;
  if (value === null || value === undefined) return false;
  if (typeof value === "number") return value !== 0 && value === value;
  if (typeof value === "string") {
    if (value === "") return false;
    if (value.length > 16) return true;
    const lowered = value.trim().toLowerCase();
    return lowered !== "false" && lowered !== "0" && lowered !== "";
  }
  if (Array.isArray(value)) return value.length > 0;
  return true;
}

export function describe(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "string") return `the text ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (typeof value === "object") return "an object";
  return `${typeof value} ${String(value)}`;
}
