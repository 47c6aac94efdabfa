// The expression language of FILTER `expr` and edge `condition` (CONTRACT.md section 4, "Expressions").
// A hand-written tokenizer and recursive-descent parser build an AST once; the AST is compiled to closures, so
// evaluating a row is a few function calls. Nothing here uses eval, Function or vm, and no lookup can leave the
// data: every field read is an own-property read, and only the helper functions below can be called.
//
// Grammar, loosest first:
//   or      := and (("||" | "or") and)*
//   and     := not (("&&" | "and") not)*
//   not     := "not" not | compare                 (Python's `not`: `not a == b` is `not (a == b)`)
//   compare := sum (("==" | "!=" | "<" | "<=" | ">" | ">=" | "in" | "not in") sum)?   (no chaining: `a < b < c` is an error)
//   sum     := product (("+" | "-") product)*
//   product := unary (("*" | "/" | "%") unary)*
//   unary   := ("!" | "-" | "+") unary | postfix     (JavaScript's `!`: `!a == b` is `(!a) == b`)
//   postfix := primary ("." name | "[" or "]" | "." helper "(" args ")")*
//   primary := number | string | true | false | null | name | helper "(" args ")" | "[" list "]" | "(" or ")"
// `===` and `!==` are accepted as `==` and `!=`.
//
// Names (decisions where the contract is silent):
// - `item` is the current element (FILTER only).
// - A name followed by `.` or `[` is an upstream node's output when a node with that id succeeded upstream,
//   otherwise a field of the item. A bare name is a field of the item first, then a node's whole output.
//   So node ids win only when followed by `.`; `item.<field>` always reaches the item.
// - A name that is neither is an ExpressionError (a typo must not silently filter out every row); a field that
//   exists with "" is fine. A missing nested field (`ai.sumary`) is an error too; an index past the end is null.
// - JavaScript's sandbox-escape words (`with`, `Function`, `this`, `import`, `constructor`, `__proto__`,
//   `prototype`, `new`, `eval`, `globalThis`, `require`) are syntax errors wherever a name is expected; any
//   other name (`process`, `window`…) is just an unknown name, since nothing global is ever in scope.
//
// Values: comparisons follow the contract — a number and a numeric string compare as numbers, a number and a
// non-numeric string are never equal or ordered (`!=` is true), two numeric strings are ordered numerically.
// "true"/"false" strings equal the booleans (CSV cells are strings). `+` adds numbers (and numeric strings
// with a number), otherwise concatenates when a string is involved. `- * / %` need numbers; division by zero
// is an error. `in` tests membership in a list, a substring in a string, or an own key in an object.
// Truthiness: false, null, 0, NaN, "", "false", "0" and empty lists are false; everything else true.

import { ExpressionError, ExpressionSyntaxError } from "./expression-errors";
import { Lexer } from "./expression-lexer";
import { Parser, type ExpressionNode, type ExpressionReference, type Helper } from "./expression-parser";
import { asNumber, describe, isTruthy, looseEquals, order } from "./expression-values";

export { ExpressionError, ExpressionSyntaxError } from "./expression-errors";
export { EXPRESSION_HELPERS, RESERVED_WORDS, type ExpressionReference } from "./expression-parser";
export { isTruthy, looseEquals } from "./expression-values";

/** `nodes`: outputs of upstream nodes that SUCCEEDED, by node id. */
export type ExpressionScope = { item?: unknown; nodes: Record<string, Record<string, unknown>> };

export interface CompiledExpression {
  source: string;
  evaluate(scope: ExpressionScope): unknown;
  /** Free root identifiers, each once, in order of first use. */
  names(): string[];
  /** Every use of a root name with its position, for save-time checks. */
  references(): ExpressionReference[];
}

const MAX_SOURCE_LENGTH = 10_000;
const hasOwn = Object.prototype.hasOwnProperty;

type Evaluator = (scope: ExpressionScope) => unknown;

function compileNode(node: ExpressionNode): Evaluator {
  switch (node.type) {
    case "literal": {
      const value = node.value;
      return () => value;
    }
    case "list": {
      if (node.items.every((item) => item.type === "literal")) {
        const constant = Object.freeze(node.items.map((item) => (item as { value: unknown }).value));
        return () => constant;
      }
      const items = node.items.map((item) => compileNode(item));
      return (scope) => items.map((item) => item(scope));
    }
    case "name":
      return compileName(node.name, node.member);
    case "member": {
      const object = compileNode(node.object);
      const key = node.key;
      return (scope) => readField(object(scope), key);
    }
    case "index": {
      const object = compileNode(node.object);
      const index = compileNode(node.index);
      return (scope) => readIndex(object(scope), index(scope));
    }
    case "call":
      return compileCall(node.helper, node.args.map((arg) => compileNode(arg)));
    case "unary":
      return compileUnary(node.op, compileNode(node.operand));
    case "binary": {
      const left = compileNode(node.left);
      const constant = node.right.type === "literal" ? node.right.value : undefined;
      const fast = typeof constant === "number" || typeof constant === "string" ? compileConstantComparison(node.op, left, constant) : undefined;
      return fast ?? compileBinary(node.op, left, compileNode(node.right));
    }
  }
}

function compileName(name: string, member: boolean): Evaluator {
  const unknown = (scope: ExpressionScope): never => {
    const nodes = Object.keys(scope.nodes);
    const upstream = nodes.length ? ` (upstream nodes: ${listOf(nodes)})` : "";
    const item = scope.item;
    const what =
      item !== null && typeof item === "object"
        ? `the item has no such field (fields: ${listOf(Object.keys(item))}) and no upstream node that succeeded has that id${upstream}`
        : `no upstream node that succeeded has that id${upstream}`;
    throw new ExpressionError(`Unknown name "${name}": ${what}`);
  };
  if (name === "item") {
    return (scope) => {
      if (!("item" in scope) || scope.item === undefined) {
        throw new ExpressionError(`"item" only exists in a FILTER expression`);
      }
      return scope.item;
    };
  }
  const fromItem = (item: unknown): boolean => item !== null && typeof item === "object" && hasOwn.call(item, name);
  if (member) {
    return (scope) => {
      const nodes = scope.nodes;
      if (hasOwn.call(nodes, name)) return nodes[name];
      const item = scope.item;
      if (fromItem(item)) return (item as Record<string, unknown>)[name];
      return unknown(scope);
    };
  }
  return (scope) => {
    const item = scope.item;
    if (fromItem(item)) return (item as Record<string, unknown>)[name];
    const nodes = scope.nodes;
    if (hasOwn.call(nodes, name)) return nodes[name];
    return unknown(scope);
  };
}

function readField(object: unknown, key: string): unknown {
  const isObject = object !== null && typeof object === "object" && !Array.isArray(object);
  if (isObject && hasOwn.call(object, key)) return (object as Record<string, unknown>)[key];
  if (isObject) throw new ExpressionError(`There is no field "${key}" (fields: ${listOf(Object.keys(object))})`);
  throw new ExpressionError(`Field "${key}" cannot be read from ${describe(object)}`);
}

/** A short list of names for an error message. */
function listOf(names: string[]): string {
  if (names.length === 0) return "none";
  return names.slice(0, 10).join(", ") + (names.length > 10 ? ", …" : "");
}

function readIndex(object: unknown, index: unknown): unknown {
  if (Array.isArray(object) || typeof object === "string") {
    if (typeof index !== "number" || !Number.isInteger(index)) {
      throw new ExpressionError(`Index ${describe(index)} is not a whole number`);
    }
    return index >= 0 && index < object.length ? object[index] : null;
  }
  if (typeof index === "string") return readField(object, index);
  throw new ExpressionError(`Cannot index ${describe(object)} with ${describe(index)}`);
}

function compileCall(helper: Helper, args: Evaluator[]): Evaluator {
  const [first, second] = args;
  const text = (value: unknown): string => (value === null || value === undefined ? "" : typeof value === "object" ? JSON.stringify(value) : String(value));
  switch (helper) {
    case "lower":
      return (scope) => text(first(scope)).toLowerCase();
    case "upper":
      return (scope) => text(first(scope)).toUpperCase();
    case "len":
      return (scope) => length(first(scope));
    case "contains":
      return (scope) => contains(first(scope), second(scope));
    case "startsWith":
      return (scope) => text(first(scope)).startsWith(text(second(scope)));
    case "endsWith":
      return (scope) => text(first(scope)).endsWith(text(second(scope)));
  }
}

function length(value: unknown): number {
  if (typeof value === "string" || Array.isArray(value)) return value.length;
  if (value === null || value === undefined) return 0;
  if (typeof value === "object") return Object.keys(value).length;
  throw new ExpressionError(`len() cannot measure ${describe(value)}`);
}

/** `contains(haystack, needle)` and `needle in haystack`. */
function contains(haystack: unknown, needle: unknown): boolean {
  if (Array.isArray(haystack)) return haystack.some((element) => looseEquals(element, needle));
  if (typeof haystack === "string") return haystack.includes(needle === null || needle === undefined ? "" : String(needle));
  if (haystack === null || haystack === undefined) return false;
  if (typeof haystack === "object") return typeof needle === "string" && hasOwn.call(haystack, needle);
  throw new ExpressionError(`"in" cannot search ${describe(haystack)}`);
}

function compileUnary(op: "!" | "-" | "+", operand: Evaluator): Evaluator {
  if (op === "!") return (scope) => !isTruthy(operand(scope));
  const sign = op === "-" ? -1 : 1;
  return (scope) => sign * numeric(operand(scope), op);
}

function numeric(value: unknown, op: string): number {
  const number = asNumber(value);
  if (number === undefined) {
    throw new ExpressionError(`"${op}" needs numbers, got ${describe(value)}`);
  }
  return number;
}

/**
 * The common filter shapes — `field >= 4`, `lower(field) == "fr"` — with the constant's type known at compile
 * time, so a row costs one type check instead of the general rules (same results as compileBinary).
 */
function compileConstantComparison(op: string, left: Evaluator, constant: number | string): Evaluator | undefined {
  if (op === "==" || op === "!=") {
    const equal =
      typeof constant === "string"
        ? (scope: ExpressionScope) => {
            const value = left(scope);
            return typeof value === "string" ? value === constant : looseEquals(value, constant);
          }
        : (scope: ExpressionScope) => {
            const value = left(scope);
            return typeof value === "number" ? value === constant : looseEquals(value, constant);
          };
    return op === "==" ? equal : (scope) => !equal(scope);
  }
  if (typeof constant !== "number") return undefined;
  switch (op) {
    case "<":
      return (scope) => (asNumber(left(scope)) ?? NaN) < constant;
    case "<=":
      return (scope) => (asNumber(left(scope)) ?? NaN) <= constant;
    case ">":
      return (scope) => (asNumber(left(scope)) ?? NaN) > constant;
    case ">=":
      return (scope) => (asNumber(left(scope)) ?? NaN) >= constant;
    default:
      return undefined;
  }
}

function compileBinary(op: string, left: Evaluator, right: Evaluator): Evaluator {
  switch (op) {
    case "||":
      return (scope) => isTruthy(left(scope)) || isTruthy(right(scope));
    case "&&":
      return (scope) => isTruthy(left(scope)) && isTruthy(right(scope));
    case "==":
      return (scope) => looseEquals(left(scope), right(scope));
    case "!=":
      return (scope) => !looseEquals(left(scope), right(scope));
    case "<":
      return (scope) => (order(left(scope), right(scope)) ?? NaN) < 0;
    case "<=":
      return (scope) => (order(left(scope), right(scope)) ?? NaN) <= 0;
    case ">":
      return (scope) => (order(left(scope), right(scope)) ?? NaN) > 0;
    case ">=":
      return (scope) => (order(left(scope), right(scope)) ?? NaN) >= 0;
    case "in":
      return (scope) => contains(right(scope), left(scope));
    case "notin":
      return (scope) => !contains(right(scope), left(scope));
    case "+":
      return (scope) => add(left(scope), right(scope));
    default:
      return compileArithmetic(op, left, right);
  }
}

function add(left: unknown, right: unknown): unknown {
  if (typeof left === "number" && typeof right === "number") return left + right;
  if (typeof left === "number" || typeof right === "number") {
    const leftNumber = asNumber(left);
    const rightNumber = asNumber(right);
    if (leftNumber !== undefined && rightNumber !== undefined) return leftNumber + rightNumber;
  }
  if (typeof left === "string" || typeof right === "string") {
    const text = (value: unknown) => (value === null || value === undefined ? "" : typeof value === "object" ? JSON.stringify(value) : String(value));
    return text(left) + text(right);
  }
  if (Array.isArray(left) && Array.isArray(right)) return [...left, ...right];
  throw new ExpressionError(`"+" cannot add ${describe(left)} and ${describe(right)}`);
}

function compileArithmetic(op: string, left: Evaluator, right: Evaluator): Evaluator {
  return (scope) => {
    const a = numeric(left(scope), op);
    const b = numeric(right(scope), op);
    switch (op) {
      case "-":
        return a - b;
      case "*":
        return a * b;
      default:
        if (b === 0) throw new ExpressionError(`Division by zero`);
        return op === "/" ? a / b : a % b;
    }
  };
}

/** Parses and compiles once; throws ExpressionSyntaxError (with a 0-based position) on bad input. */
export function compileExpression(source: string): CompiledExpression {
  if (typeof source !== "string") throw new ExpressionSyntaxError("An expression must be text", 0);
  if (source.length > MAX_SOURCE_LENGTH) {
    throw new ExpressionSyntaxError(`Expression is longer than ${MAX_SOURCE_LENGTH} characters`, MAX_SOURCE_LENGTH);
  }
  if (source.trim() === "") throw new ExpressionSyntaxError("Expression is empty", 0);
  const parser = new Parser(source, new Lexer(source));
  const ast = parser.parse();
  const evaluate = compileNode(ast);
  const references = parser.references;
  return {
    source,
    evaluate: (scope) => evaluate(scope),
    names: () => [...new Set(references.map((reference) => reference.name))],
    references: () => references.map((reference) => ({ ...reference })),
  };
}
