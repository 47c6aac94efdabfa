import "server-only";
import { compileExpression, ExpressionError, isTruthy } from "@/lib/graph/expressions";
import { renderTemplate, TemplateError } from "@/lib/graph/templates";
import { sliceClock } from "@/lib/slices";
import { NodeError, type NodeExecutor } from "../types";

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
    for (let i = 0; i < items.length; i++) {
      // 100,000 items take a few hundred ms on a slow machine: the event loop is given back between slices.
      if (clock.due()) await clock.yield();
      let value: unknown;
      try {
        value = compiled.evaluate({ item: items[i], nodes });
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
