// The work and size limits of user-written expressions (FILTER `expr`, edge conditions). An expression is evaluated
// on the server's main thread once per item; without limits `len(big.rows + big.rows + …)` over a large upload
// builds lists of hundreds of thousands of rows for every item and holds every other request meanwhile.
//
// Work is counted, never timed, so a limit fails the same expression on the same data on every machine: one unit per
// operator or name evaluated, one per list element copied or compared, one per CHARS_PER_WORK_UNIT characters of
// text scanned or built.
import { CHARS_PER_WORK_UNIT } from "./bounded-json";
import { ExpressionError } from "./expression-errors";

export const EXPRESSION_LIMITS = {
  /** The longest text an expression may build (by `+`, `lower`, `upper` or turning a list or object into text). */
  maxTextChars: 1_000_000,
  /** The longest list an expression may build (by `[…]` or `+`). */
  maxListItems: 10_000,
  /** Work for one evaluation: one item of a FILTER, or one edge condition. */
  workPerItem: 1_000_000,
  /** Work for all the items of one FILTER node together. */
  workPerNode: 20_000_000,
} as const;

export type ExpressionLimits = { [K in keyof typeof EXPRESSION_LIMITS]: number };

/** A limit was reached: the message names it (an ExpressionError, so it fails the item's node like any other). */
export class ExpressionLimitError extends ExpressionError {
  constructor(message: string) {
    super(message);
    this.name = "ExpressionLimitError";
  }
}

const number = (n: number) => n.toLocaleString("en-US");

/** One node's budget: `startItem()` before each evaluation; the evaluator charges it as it goes. */
export class ExpressionBudget {
  /** Units of work done so far, over every item. */
  work = 0;
  /** The work count at which the current item or the node passes its limit, whichever comes first. */
  ceiling: number;
  private itemStart = 0;

  constructor(readonly limits: ExpressionLimits = EXPRESSION_LIMITS) {
    this.ceiling = Math.min(limits.workPerItem, limits.workPerNode);
  }

  startItem(): void {
    this.itemStart = this.work;
    this.ceiling = Math.min(this.work + this.limits.workPerItem, this.limits.workPerNode);
  }

  charge(units: number): void {
    this.work += units;
    if (this.work > this.ceiling) this.exceeded();
  }

  chargeText(chars: number): void {
    this.charge(1 + Math.floor(chars / CHARS_PER_WORK_UNIT));
  }

  checkText(chars: number): void {
    if (chars > this.limits.maxTextChars) {
      throw new ExpressionLimitError(
        `The expression would build a text of more than ${number(this.limits.maxTextChars)} characters, the limit for any text an expression builds`,
      );
    }
  }

  checkList(items: number): void {
    if (items > this.limits.maxListItems) {
      throw new ExpressionLimitError(
        `The expression would build a list of more than ${number(this.limits.maxListItems)} items, the limit for any list an expression builds`,
      );
    }
  }

  exceeded(): never {
    if (this.work > this.limits.workPerNode) {
      throw new ExpressionLimitError(
        `The expression did more than ${number(this.limits.workPerNode)} steps of work over this node's items, the limit for one node: simplify it or filter fewer items`,
      );
    }
    throw new ExpressionLimitError(
      `The expression did more than ${number(this.limits.workPerItem)} steps of work on one item, the limit for one item: simplify it`,
    );
  }
}
