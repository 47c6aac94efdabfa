import "server-only";
import { compileExpression, ExpressionBudget, ExpressionError, isTruthy } from "@/lib/graph/expressions";
import { renderTemplate, TemplateError } from "@/lib/graph/templates";
import { sliceClock } from "@/lib/slices";
import { NodeError, NodeStopped, type NodeExecutor } from "../types";

/**
 * The event loop is given back after this much expression work (expression-budget.ts units) even when the slice
 * clock, which only reads the time every 256 items, has not come due: one item may do a great deal of work.
 */
const WORK_PER_SLICE = 200_000;
/** A long filter asks whether the run was cancelled (or handed back) this often, or after this much work. */
const STOP_CHECK_MS = 250;
const WORK_PER_STOP_CHECK = 2_000_000;

export const filterExecutor: NodeExecutor<"FILTER"> = {
  async execute(node, rt) {
    const { source, expr } = node.data as { source: string; expr: string };
    const items = renderSource(source, rt.templateContext("source"));
    let compiled: ReturnType<typeof compileExpression>;
    try {
      compiled = compileExpression(expr);
    } catch (error) {
      throw new NodeError(`The filter expression "${expr}" is not valid: ${(error as Error).message}`, { cause: error });
    }
    const nodes = rt.nodeOutputs();
    const kept: unknown[] = [];
    const clock = sliceClock();
    const budget = new ExpressionBudget();
    let workAtYield = 0;
    let stopCheckedAt = performance.now();
    let workAtStopCheck = 0;
    for (let i = 0; i < items.length; i++) {
      // The event loop is given back by time and by work done, so other requests (and a cancel) get their turn.
      if (clock.due() || budget.work - workAtYield >= WORK_PER_SLICE) {
        await clock.yield();
        workAtYield = budget.work;
        if (performance.now() - stopCheckedAt >= STOP_CHECK_MS || budget.work - workAtStopCheck >= WORK_PER_STOP_CHECK) {
          if (await rt.shouldStop()) throw new NodeStopped();
          stopCheckedAt = performance.now();
          workAtStopCheck = budget.work;
        }
      }
      let value: unknown;
      try {
        budget.startItem();
        value = compiled.evaluate({ item: items[i], nodes }, budget);
      } catch (error) {
        if (error instanceof ExpressionError) {
          throw new NodeError(`The filter expression "${expr}" failed on item ${i}: ${error.message}`, { cause: error });
        }
        throw error;
      }
      if (isTruthy(value)) kept.push(items[i]);
    }
    const filteredOut = items.length - kept.length;
    return {
      kind: "done",
      output: { items: kept, count: kept.length, filteredOut },
      itemsIn: items.length,
      itemsOut: kept.length,
    };
  },
};

function renderSource(source: string, ctx: Parameters<typeof renderTemplate>[1]): unknown[] {
  let value: unknown;
  try {
    value = renderTemplate(source, ctx);
  } catch (error) {
    if (error instanceof TemplateError) throw new NodeError(`The filter source "${source}" cannot be read: ${error.message}`, { cause: error });
    throw error;
  }
  if (!Array.isArray(value)) {
    throw new NodeError(`The filter source "${source}" is not a list (it is ${describe(value)}): point it at an array such as {{src.rows}}.`);
  }
  return value;
}

export function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}
