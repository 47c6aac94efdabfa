// One user-written expression must not hold the server: every value an expression builds has a size limit and every
// evaluation a work limit, counted (never timed), so these tests assert counts and sentences.
import { describe, expect, it } from "vitest";
import { compileExpression, EXPRESSION_LIMITS, ExpressionBudget, ExpressionLimitError } from "@/lib/graph/expressions";
import { MAX_RENDERED_CHARS, renderTemplateString, TemplateError } from "@/lib/graph/templates";
import { fakeRuntime } from "@/lib/nodes/__tests__/fake-runtime";
import { filterExecutor } from "@/lib/nodes/filter/execute";
import { NodeError, NodeStopped, type NodeOf } from "@/lib/nodes/types";

const rowsOf = (n: number) => Array.from({ length: n }, (_, i) => ({ id: String(i), email: `p${i}@example.com`, note: "x".repeat(20) }));
const big = { rows: rowsOf(100_000), rowCount: 100_000 };
const filter = (expr: string, source = "{{src.rows}}") => ({ id: "f", type: "FILTER", data: { source, expr } }) as NodeOf<"FILTER">;

function evaluateWithBudget(expr: string, scope: { item?: unknown; nodes: Record<string, Record<string, unknown>> }) {
  const budget = new ExpressionBudget();
  budget.startItem();
  let error: unknown;
  try {
    compileExpression(expr).evaluate(scope, budget);
  } catch (e) {
    error = e;
  }
  return { error, work: budget.work };
}

describe("expression size limits", () => {
  it("refuses to concatenate a 100,000-row list with itself before copying anything, naming the limit", () => {
    const { error, work } = evaluateWithBudget("len(big.rows + big.rows + big.rows + big.rows)", { item: {}, nodes: { big } });
    expect(error).toBeInstanceOf(ExpressionLimitError);
    expect((error as Error).message).toBe(
      "The expression would build a list of more than 10,000 items, the limit for any list an expression builds",
    );
    expect(work).toBeLessThan(10);
  });

  it("stops a text that doubles itself at the text limit", () => {
    const doubling = "s" + " + s".repeat(40);
    const { error } = evaluateWithBudget(`len(${doubling.replaceAll("s", "(item.s + item.s)")})`, { item: { s: "y".repeat(20_000) }, nodes: {} });
    expect((error as Error).message).toMatch(/more than 1,000,000 characters, the limit for any text an expression builds/);
  });

  it("measures a whole output before turning it into text, and stops measuring at the limit", () => {
    const { error, work } = evaluateWithBudget('contains(lower(big), "zzz")', { item: {}, nodes: { big } });
    expect((error as Error).message).toMatch(/more than 1,000,000 characters/);
    // The walk stopped near the limit: far fewer units than the 400,000 values of the output.
    expect(work).toBeLessThan(60_000);
  });

  it("keeps ordinary expressions well inside the limits", () => {
    const { error, work } = evaluateWithBudget('lower(item.email) == "p1@example.com" and len(big.rows) > 10 and item.id in ["1", "2"]', {
      item: big.rows[1],
      nodes: { big },
    });
    expect(error).toBeUndefined();
    expect(work).toBeLessThan(20);
  });
});

describe("expression work limits", () => {
  it("fails one evaluation past the per-item work limit, counting each list element compared", () => {
    const budget = new ExpressionBudget({ ...EXPRESSION_LIMITS, workPerItem: 50_000 });
    budget.startItem();
    const error = (() => {
      try {
        compileExpression('"nobody" in big.rows').evaluate({ item: {}, nodes: { big } }, budget);
      } catch (e) {
        return e as Error;
      }
    })();
    expect(error?.message).toBe("The expression did more than 50,000 steps of work on one item, the limit for one item: simplify it");
    expect(budget.work).toBe(50_001);
  });

  it("counts deep comparisons of two different large lists", () => {
    const [a, b] = [{ rows: rowsOf(200_000) }, { rows: rowsOf(200_000) }];
    const { error, work } = evaluateWithBudget("a.rows == b.rows", { item: {}, nodes: { a, b } });
    expect((error as Error).message).toMatch(/more than 1,000,000 steps of work on one item/);
    expect(work).toBe(EXPRESSION_LIMITS.workPerItem + 1);
  });

  it("fails a FILTER node past the per-node work limit, naming the item where it stopped", async () => {
    const list = { rows: rowsOf(1_000) };
    const rt = fakeRuntime({ src: big, list });
    const error = await filterExecutor.execute(filter("item.id in list.rows"), rt).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NodeError);
    const message = (error as Error).message;
    expect(message).toMatch(/steps of work over this node's items, the limit for one node/);
    // Each item compares its id with 1,000 rows: the node limit is reached near item 20,000, not after 100,000.
    const item = Number(/failed on item (\d+)/.exec(message)?.[1]);
    expect(item).toBeGreaterThan(19_000);
    expect(item).toBeLessThan(20_000);
  });

  it("an edge condition or a lone evaluation gets a budget of its own", () => {
    const compiled = compileExpression('"nobody" in big.rows + big.rows');
    expect(() => compiled.evaluate({ nodes: { big } })).toThrow(ExpressionLimitError);
  });
});

describe("FILTER gives the event loop back by work done, and sees a cancel inside a long node", () => {
  it("yields many times within a few heavy items (the slice clock alone reads the time every 256 items)", async () => {
    const heavy = { rows: Array.from({ length: 300_000 }, (_, i) => i) };
    let turns = 0;
    let spinning = true;
    const spin = () => {
      turns++;
      if (spinning) setImmediate(spin);
    };
    setImmediate(spin);
    const result = await filterExecutor.execute(filter('"nobody" in heavy.rows', "{{src.rows}}"), fakeRuntime({ src: { rows: rowsOf(40) }, heavy }));
    spinning = false;
    expect(result.kind === "done" && result.output.count).toBe(0);
    // 40 items of ~300,000 units each, the loop given back after every 200,000 units: about one turn per item.
    expect(turns).toBeGreaterThanOrEqual(30);
  });

  it("stops with NodeStopped when the run is cancelled during the node", async () => {
    const heavy = { rows: Array.from({ length: 300_000 }, (_, i) => i) };
    let asked = 0;
    const rt = { ...fakeRuntime({ src: { rows: rowsOf(60) }, heavy }), shouldStop: async () => ++asked > 0 };
    const error = await filterExecutor.execute(filter('"nobody" in heavy.rows'), rt).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NodeStopped);
    expect(asked).toBe(1);
  });
});

describe("template size limits", () => {
  const ctx = (outputs: Record<string, Record<string, unknown>>) => ({
    node: (id: string) => (outputs[id] ? { status: "SUCCESS", output: outputs[id] } : undefined),
    nodeId: "out",
    field: "body",
  });

  it("refuses to interpolate a whole 100,000-row output into text, naming the limit", () => {
    const render = () => renderTemplateString("Rows: {{big}}", ctx({ big }));
    expect(render).toThrow(TemplateError);
    expect(render).toThrow(
      `Template {{big}} in body of node "out" makes the text longer than ${MAX_RENDERED_CHARS.toLocaleString("en-US")} characters, the limit for rendered text: name a field rather than a whole list or output`,
    );
  });

  it("refuses a text that grows past the limit through many references", () => {
    const long = { text: "z".repeat(300_000) };
    expect(() => renderTemplateString("{{a.text}} {{a.text}} {{a.text}} {{a.text}}", ctx({ a: long }))).toThrow(/the limit for rendered text/);
  });

  it("still renders ordinary templates", () => {
    expect(renderTemplateString("Hi {{a.row}}", ctx({ a: { row: { name: "Ann" } } }))).toBe('Hi {"name":"Ann"}');
  });
});
