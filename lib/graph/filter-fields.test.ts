import { describe, expect, it } from "vitest";
import { closestName, itemColumnProblems } from "./list-shapes";

const uploads = new Map([["upl_1", { filename: "people.csv", columns: ["email", "First Name", "age", "plan"] }]]);
const graph = (expr: string, source = "{{src.rows}}") => ({
  nodes: [
    { id: "start", type: "TRIGGER", data: {} },
    { id: "src", type: "DATA_SOURCE", data: { uploadId: "upl_1" } },
    { id: "adults", type: "FILTER", data: { source, expr } },
    { id: "out", type: "OUTPUT", data: { forEach: "{{adults.items}}", to: "{{item.emial}}", subject: "Hi", body: "x" } },
  ],
  edges: [],
});

describe("a FILTER's fields are the rows' columns", () => {
  it("flags a misspelled bare name or item field with the closest column", () => {
    const problems = itemColumnProblems(graph('agee > 30 and item.paln == "pro" and item["First Name"] != ""'), uploads);
    expect(problems.filter((p) => p.path.endsWith(".expr"))).toEqual([
      {
        path: "graph.nodes[2].data.expr",
        nodeId: "adults",
        message: 'The filter names "agee" (at position 0), which is not a column of people.csv. Did you mean "age"? Available columns: email, First Name, age, plan',
      },
      {
        path: "graph.nodes[2].data.expr",
        nodeId: "adults",
        message: 'The filter names "paln" (at position 14), which is not a column of people.csv. Did you mean "plan"? Available columns: email, First Name, age, plan',
      },
    ]);
    // The OUTPUT fed by that FILTER gets the same help.
    expect(problems.find((p) => p.nodeId === "out")?.message).toBe(
      '{{item.emial}}: people.csv has no column "emial". Did you mean "email"? Available columns: email, First Name, age, plan',
    );
  });

  it("accepts the columns, node ids and helpers; says nothing when the rows are not known", () => {
    expect(itemColumnProblems(graph('age > 30 and contains(lower(plan), "pro") and src.rowCount > 0 and item.email != ""'), uploads).filter((p) => p.nodeId === "adults")).toEqual([]);
    expect(itemColumnProblems(graph("anything > 1", "{{start.body}}"), uploads).filter((p) => p.nodeId === "adults")).toEqual([]);
    expect(itemColumnProblems(graph("age >"), uploads).filter((p) => p.nodeId === "adults")).toEqual([]);
  });

  it("suggests only close names", () => {
    expect(closestName("EMAIL", ["email"])).toBe("email");
    expect(closestName("zzz", ["email", "age"])).toBeUndefined();
    expect(closestName("fristname", ["firstname", "lastname"])).toBe("firstname");
  });
});

describe("a cycle", () => {
  it("is named in the order its edges go round, and every edge of the loop is known", async () => {
    const { validateGraph } = await import("./validate");
    const { findCycles } = await import("./validate-structure");
    const edges = [
      { source: "start", target: "a" },
      { source: "a", target: "b" },
      { source: "b", target: "c" },
      { source: "c", target: "out" },
      { source: "c", target: "a" },
    ];
    const nodes = [
      { id: "start", type: "TRIGGER", data: {} },
      ...["a", "b", "c"].map((id) => ({ id, type: "FILTER", data: { source: "{{start.body}}", expr: "true" } })),
      { id: "out", type: "OUTPUT", data: { forEach: "{{c.items}}", to: "{{item.email}}", subject: "s", body: "b" } },
    ];
    const cycle = validateGraph({ nodes, edges }).errors.filter((e) => e.code === "cycle");
    expect(cycle).toEqual([
      { code: "cycle", path: "graph.edges[1]", nodeId: "a", message: 'Nodes "a" → "b" → "c" → "a" form a cycle; a node cannot depend on itself: remove one of these edges' },
    ]);
    expect(findCycles(["start", "a", "b", "c", "out"], edges.map((e, index) => ({ ...e, index })))).toEqual([[1, 2, 4]]);
  });
});
