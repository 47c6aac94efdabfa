// The expression language of FILTER `expr` and edge `condition`.
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
//
// Limits (expression-budget.ts): every evaluation charges an ExpressionBudget for the work it does and checks the
// size of every text and list it builds before building it, so one expression can neither hold the server's main
// thread nor fill its memory; a limit fails the item with a sentence naming it.

import { jsonLengthWithin } from "./bounded-json";
import { ExpressionBudget } from "./expression-budget";
import { ExpressionError, ExpressionSyntaxError } from "./expression-errors";
import { Lexer } from "./expression-lexer";
import { Parser, type ExpressionNode, type ExpressionReference, type Helper } from "./expression-parser";
import { asNumber, describe, isTruthy, looseEquals, order } from "./expression-values";

export { ExpressionBudget, ExpressionLimitError, EXPRESSION_LIMITS, type ExpressionLimits } from "./expression-budget";
export { ExpressionError, ExpressionSyntaxError } from "./expression-errors";
export { EXPRESSION_HELPERS, RESERVED_WORDS, type ExpressionReference } from "./expression-parser";
export { isTruthy, looseEquals } from "./expression-values";

/** `nodes`: outputs of upstream nodes that SUCCEEDED, by node id. */
export type ExpressionScope = { item?: unknown; nodes: Record<string, Record<string, unknown>> };

export interface CompiledExpression {
  source: string;
  /**
   * Evaluates once. `budget`: the node's budget, shared by its items (FILTER calls `startItem()` before each);
   * without one, this evaluation gets a budget of its own. Throws ExpressionError, ExpressionLimitError included.
   */
  evaluate(scope: ExpressionScope, budget?: ExpressionBudget): unknown;
  /** Free root identifiers, each once, in order of first use. */
  names(): string[];
  /** Every use of a root name with its position, for save-time checks. */
  references(): ExpressionReference[];
}

const MAX_SOURCE_LENGTH = 10_000;
const hasOwn = Object.prototype.hasOwnProperty;

type Evaluator = (scope: ExpressionScope, budget: ExpressionBudget) => unknown;

/** Every operator, field read and helper call costs one unit (names and literals are paid by their user). */
function tick(budget: ExpressionBudget): void {
  if (++budget.work > budget.ceiling) budget.exceeded();
}

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
      return (scope, budget) => {
        tick(budget);
        budget.checkList(items.length);
        return items.map((item) => item(scope, budget));
      };
    }
    case "name":
      return compileName(node.name, node.member);
    case "member": {
      const object = compileNode(node.object);
      const key = node.key;
      return (scope, budget) => (tick(budget), readField(object(scope, budget), key));
    }
    case "index": {
      const object = compileNode(node.object);
      const index = compileNode(node.index);
      return (scope, budget) => (tick(budget), readIndex(object(scope, budget), index(scope, budget)));
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
  switch (helper) {
    case "lower":
      return (scope, budget) => (tick(budget), changeCase(toText(first(scope, budget), budget), budget, "lower"));
    case "upper":
      return (scope, budget) => (tick(budget), changeCase(toText(first(scope, budget), budget), budget, "upper"));
    case "len":
      return (scope, budget) => (tick(budget), length(first(scope, budget), budget));
    case "contains":
      return (scope, budget) => (tick(budget), contains(first(scope, budget), second(scope, budget), budget));
    case "startsWith":
      return (scope, budget) => {
        tick(budget);
        const [text, prefix] = [toText(first(scope, budget), budget), toText(second(scope, budget), budget)];
        budget.chargeText(prefix.length);
        return text.startsWith(prefix);
      };
    case "endsWith":
      return (scope, budget) => {
        tick(budget);
        const [text, suffix] = [toText(first(scope, budget), budget), toText(second(scope, budget), budget)];
        budget.chargeText(suffix.length);
        return text.endsWith(suffix);
      };
  }
}

function changeCase(text: string, budget: ExpressionBudget, to: "lower" | "upper"): string {
  budget.checkText(text.length);
  budget.chargeText(text.length);
  return to === "lower" ? text.toLowerCase() : text.toUpperCase();
}

/**
 * A value as text (helpers, and `+` with a string): null is "", a list or object its JSON. The JSON is measured
 * before it is built, so a whole upstream output never becomes a text past the limit.
 */
function toText(value: unknown, budget: ExpressionBudget): string {
  if (typeof value === "string") return value;
  if (value === null || value === undefined) return "";
  if (typeof value !== "object") return String(value);
  const limit = budget.limits.maxTextChars;
  const estimate = jsonLengthWithin(value, limit, (units) => budget.charge(units));
  budget.checkText(estimate);
  const text = JSON.stringify(value);
  budget.checkText(text.length);
  budget.chargeText(text.length);
  return text;
}

function length(value: unknown, budget: ExpressionBudget): number {
  if (typeof value === "string" || Array.isArray(value)) return value.length;
  if (value === null || value === undefined) return 0;
  if (typeof value === "object") {
    const size = Object.keys(value).length;
    budget.charge(size);
    return size;
  }
  throw new ExpressionError(`len() cannot measure ${describe(value)}`);
}

/** `contains(haystack, needle)` and `needle in haystack`. */
function contains(haystack: unknown, needle: unknown, budget: ExpressionBudget): boolean {
  if (Array.isArray(haystack)) return haystack.some((element) => equals(element, needle, budget));
  if (typeof haystack === "string") {
    budget.chargeText(haystack.length);
    return haystack.includes(needle === null || needle === undefined ? "" : toText(needle, budget));
  }
  if (haystack === null || haystack === undefined) return false;
  if (typeof haystack === "object") return typeof needle === "string" && hasOwn.call(haystack, needle);
  throw new ExpressionError(`"in" cannot search ${describe(haystack)}`);
}

/** The language's `==` (looseEquals), charging one unit per value compared: lists and objects compare deeply. */
function equals(left: unknown, right: unknown, budget: ExpressionBudget): boolean {
  if (++budget.work > budget.ceiling) budget.exceeded();
  if (left === right) return true;
  if (left === null || right === null || typeof left !== "object" || typeof right !== "object") {
    if (typeof left === "string" && typeof right === "string") budget.chargeText(Math.min(left.length, right.length));
    return looseEquals(left, right);
  }
  if (Array.isArray(left) !== Array.isArray(right)) return false;
  if (Array.isArray(left)) {
    const other = right as unknown[];
    return left.length === other.length && left.every((value, i) => equals(value, other[i], budget));
  }
  const leftRecord = left as Record<string, unknown>;
  const rightRecord = right as Record<string, unknown>;
  const leftKeys = Object.keys(leftRecord);
  budget.charge(leftKeys.length);
  return (
    leftKeys.length === Object.keys(rightRecord).length &&
    leftKeys.every((key) => hasOwn.call(rightRecord, key) && equals(leftRecord[key], rightRecord[key], budget))
  );
}

function compareOrder(left: unknown, right: unknown, budget: ExpressionBudget): number {
  if (typeof left === "string" && typeof right === "string") budget.chargeText(Math.min(left.length, right.length));
  return order(left, right) ?? NaN;
}

function compileUnary(op: "!" | "-" | "+", operand: Evaluator): Evaluator {
  if (op === "!") return (scope, budget) => (tick(budget), !isTruthy(operand(scope, budget)));
  const sign = op === "-" ? -1 : 1;
  return (scope, budget) => (tick(budget), sign * numeric(operand(scope, budget), op));
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
 * time, so a row costs one type check instead of the general rules (same results as compileBinary). Comparing with
 * a constant costs at most the constant's length, already charged when the expression was parsed.
 */
function compileConstantComparison(op: string, left: Evaluator, constant: number | string): Evaluator | undefined {
  if (op === "==" || op === "!=") {
    const equal =
      typeof constant === "string"
        ? (scope: ExpressionScope, budget: ExpressionBudget) => {
            tick(budget);
            const value = left(scope, budget);
            return typeof value === "string" ? value === constant : looseEquals(value, constant);
          }
        : (scope: ExpressionScope, budget: ExpressionBudget) => {
            tick(budget);
            const value = left(scope, budget);
            return typeof value === "number" ? value === constant : looseEquals(value, constant);
          };
    return op === "==" ? equal : (scope, budget) => (tick(budget), !equal(scope, budget));
  }
  if (typeof constant !== "number") return undefined;
  switch (op) {
    case "<":
      return (scope, budget) => (tick(budget), (asNumber(left(scope, budget)) ?? NaN) < constant);
    case "<=":
      return (scope, budget) => (tick(budget), (asNumber(left(scope, budget)) ?? NaN) <= constant);
    case ">":
      return (scope, budget) => (tick(budget), (asNumber(left(scope, budget)) ?? NaN) > constant);
    case ">=":
      return (scope, budget) => (tick(budget), (asNumber(left(scope, budget)) ?? NaN) >= constant);
    default:
      return undefined;
  }
}

function compileBinary(op: string, left: Evaluator, right: Evaluator): Evaluator {
  switch (op) {
    case "||":
      return (scope, budget) => (tick(budget), isTruthy(left(scope, budget)) || isTruthy(right(scope, budget)));
    case "&&":
      return (scope, budget) => (tick(budget), isTruthy(left(scope, budget)) && isTruthy(right(scope, budget)));
    case "==":
      return (scope, budget) => (tick(budget), equals(left(scope, budget), right(scope, budget), budget));
    case "!=":
      return (scope, budget) => (tick(budget), !equals(left(scope, budget), right(scope, budget), budget));
    case "<":
      return (scope, budget) => (tick(budget), compareOrder(left(scope, budget), right(scope, budget), budget) < 0);
    case "<=":
      return (scope, budget) => (tick(budget), compareOrder(left(scope, budget), right(scope, budget), budget) <= 0);
    case ">":
      return (scope, budget) => (tick(budget), compareOrder(left(scope, budget), right(scope, budget), budget) > 0);
    case ">=":
      return (scope, budget) => (tick(budget), compareOrder(left(scope, budget), right(scope, budget), budget) >= 0);
    case "in":
      return (scope, budget) => (tick(budget), contains(right(scope, budget), left(scope, budget), budget));
    case "notin":
      return (scope, budget) => (tick(budget), !contains(right(scope, budget), left(scope, budget), budget));
    case "+":
      return (scope, budget) => (tick(budget), add(left(scope, budget), right(scope, budget), budget));
    default:
      return compileArithmetic(op, left, right);
  }
}

function add(left: unknown, right: unknown, budget: ExpressionBudget): unknown {
  if (typeof left === "number" && typeof right === "number") return left + right;
  if (typeof left === "number" || typeof right === "number") {
    const leftNumber = asNumber(left);
    const rightNumber = asNumber(right);
    if (leftNumber !== undefined && rightNumber !== undefined) return leftNumber + rightNumber;
  }
  if (typeof left === "string" || typeof right === "string") {
    const leftText = toText(left, budget);
    const rightText = toText(right, budget);
    budget.checkText(leftText.length + rightText.length);
    budget.chargeText(leftText.length + rightText.length);
    return leftText + rightText;
  }
  if (Array.isArray(left) && Array.isArray(right)) {
    budget.checkList(left.length + right.length);
    budget.charge(left.length + right.length);
    return [...left, ...right];
  }
  throw new ExpressionError(`"+" cannot add ${describe(left)} and ${describe(right)}`);
}

function compileArithmetic(op: string, left: Evaluator, right: Evaluator): Evaluator {
  return (scope, budget) => {
    tick(budget);
    const a = numeric(left(scope, budget), op);
    const b = numeric(right(scope, budget), op);
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
    evaluate: (scope, budget) => {
      if (budget) return evaluate(scope, budget);
      const own = new ExpressionBudget();
      own.startItem();
      return evaluate(scope, own);
    },
    names: () => [...new Set(references.map((reference) => reference.name))],
    references: () => references.map((reference) => ({ ...reference })),
  };
}
