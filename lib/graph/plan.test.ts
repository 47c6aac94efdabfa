import { describe, expect, it, vi } from "vitest";
import {
  GraphCycleError,
  ancestorsOf,
  decideNode,
  incomingEdges,
  outgoingEdges,
  simulateRun,
  topologicalOrder,
} from "./plan";
import type { NodeStatus } from "@/lib/schemas/runs";
import type { Graph, GraphEdge, GraphNode } from "./schema";

/** A graph of DATA_SOURCE nodes after one TRIGGER "t": only the edges matter to planning. */
function graph(ids: string[], edges: [string, string, string?][]): Graph {
  return {
    nodes: ids.map((id): GraphNode => (id === "t" ? { id, type: "TRIGGER", data: {} } : { id, type: "DATA_SOURCE", data: { uploadId: "u" } })),
    edges: edges.map(([source, target, condition]) => (condition === undefined ? { source, target } : { source, target, condition })),
  };
}

const IF_ELSE_JOIN = graph(["t", "ai", "yes", "no", "join", "after"], [
  ["t", "ai"],
  ["ai", "yes", "ai.urgent"],
  ["ai", "no", "!ai.urgent"],
  ["yes", "join"],
  ["no", "join"],
  ["join", "after"],
]);

describe("topologicalOrder", () => {
  it("orders every edge forward, ties broken by node order", () => {
    const g = graph(["t", "c", "b", "a", "d"], [["t", "a"], ["t", "b"], ["t", "c"], ["a", "d"], ["c", "d"], ["b", "d"]]);
    expect(topologicalOrder(g)).toEqual(["t", "c", "b", "a", "d"]);
    const reversed = graph(["d", "a", "b", "t"], [["t", "a"], ["a", "b"], ["b", "d"]]);
    expect(topologicalOrder(reversed)).toEqual(["t", "a", "b", "d"]);
  });

  it("throws on a cycle, naming the nodes left over", () => {
    const g = graph(["t", "a", "b", "c"], [["t", "a"], ["a", "b"], ["b", "a"], ["b", "c"]]);
    expect(() => topologicalOrder(g)).toThrow(GraphCycleError);
    expect(() => topologicalOrder(g)).toThrow('The graph has a cycle through "a", "b", "c"');
  });
});

describe("graph helpers", () => {
  it("finds incoming and outgoing edges and ancestors", () => {
    expect(incomingEdges(IF_ELSE_JOIN, "join").map((edge) => edge.source)).toEqual(["yes", "no"]);
    expect(outgoingEdges(IF_ELSE_JOIN, "ai")).toEqual([
      { source: "ai", target: "yes", condition: "ai.urgent" },
      { source: "ai", target: "no", condition: "!ai.urgent" },
    ]);
    expect([...ancestorsOf(IF_ELSE_JOIN, "after")].sort()).toEqual(["ai", "join", "no", "t", "yes"]);
    expect([...ancestorsOf(IF_ELSE_JOIN, "yes")].sort()).toEqual(["ai", "t"]);
    expect(ancestorsOf(IF_ELSE_JOIN, "t").size).toBe(0);
  });
});

describe("decideNode", () => {
  const statuses = (map: Record<string, NodeStatus>) => (id: string) => map[id] ?? "PENDING";
  const always = () => true;

  it("runs a node without incoming edges", () => {
    expect(decideNode(IF_ELSE_JOIN, "t", statuses({}), always)).toBe("run");
  });

  it("waits while any upstream node is PENDING or RUNNING, without evaluating conditions", () => {
    const live = vi.fn(always);
    expect(decideNode(IF_ELSE_JOIN, "join", statuses({ yes: "SUCCESS", no: "PENDING" }), live)).toBe("wait");
    expect(decideNode(IF_ELSE_JOIN, "join", statuses({ yes: "RUNNING", no: "SKIPPED" }), live)).toBe("wait");
    expect(live).not.toHaveBeenCalled();
  });

  it("skips when an upstream node FAILED, even with a live edge", () => {
    expect(decideNode(IF_ELSE_JOIN, "join", statuses({ yes: "SUCCESS", no: "FAILED" }), always)).toBe("skip");
  });

  it("runs when at least one incoming edge is live", () => {
    expect(decideNode(IF_ELSE_JOIN, "join", statuses({ yes: "SKIPPED", no: "SUCCESS" }), always)).toBe("run");
  });

  it("skips when every incoming edge is dead", () => {
    expect(decideNode(IF_ELSE_JOIN, "join", statuses({ yes: "SKIPPED", no: "SKIPPED" }), always)).toBe("skip");
    expect(decideNode(IF_ELSE_JOIN, "yes", statuses({ ai: "SUCCESS" }), () => false)).toBe("skip");
  });

  it("evaluates edgeIsLive only for edges whose source SUCCEEDED", () => {
    const live = vi.fn((edge: GraphEdge) => edge.source === "no");
    expect(decideNode(IF_ELSE_JOIN, "join", statuses({ yes: "SKIPPED", no: "SUCCESS" }), live)).toBe("run");
    expect(live.mock.calls.map(([edge]) => edge.source)).toEqual(["no"]);
  });
});

describe("simulateRun", () => {
  it("runs a linear graph", () => {
    const g = graph(["t", "a", "b", "c"], [["t", "a"], ["a", "b"], ["b", "c"]]);
    expect(simulateRun(g, {})).toEqual({ t: "SUCCESS", a: "SUCCESS", b: "SUCCESS", c: "SUCCESS" });
  });

  it("runs fan-out and fan-in", () => {
    const g = graph(["t", "src", "x", "y", "z", "all"], [["t", "src"], ["src", "x"], ["src", "y"], ["src", "z"], ["x", "all"], ["y", "all"], ["z", "all"]]);
    expect(Object.values(simulateRun(g, {}))).toEqual(Array(6).fill("SUCCESS"));
  });

  it("skips everything downstream of a failed node", () => {
    const g = graph(["t", "a", "b", "c"], [["t", "a"], ["a", "b"], ["b", "c"]]);
    expect(simulateRun(g, { failed: ["a"] })).toEqual({ t: "SUCCESS", a: "FAILED", b: "SKIPPED", c: "SKIPPED" });
  });

  it("runs the join after the if branch when the condition is true", () => {
    expect(simulateRun(IF_ELSE_JOIN, { conditions: { "ai->yes": true, "ai->no": false } })).toEqual({
      t: "SUCCESS", ai: "SUCCESS", yes: "SUCCESS", no: "SKIPPED", join: "SUCCESS", after: "SUCCESS",
    });
  });

  it("runs the join after the else branch when the condition is false", () => {
    expect(simulateRun(IF_ELSE_JOIN, { conditions: { "ai->yes": false, "ai->no": true } })).toEqual({
      t: "SUCCESS", ai: "SUCCESS", yes: "SKIPPED", no: "SUCCESS", join: "SUCCESS", after: "SUCCESS",
    });
  });

  it("skips a join whose branches are both dead, and everything after it", () => {
    expect(simulateRun(IF_ELSE_JOIN, { conditions: { "ai->yes": false, "ai->no": false } })).toEqual({
      t: "SUCCESS", ai: "SUCCESS", yes: "SKIPPED", no: "SKIPPED", join: "SKIPPED", after: "SKIPPED",
    });
  });

  it("skips a join fed by a dead conditional edge from a node that ran", () => {
    const g = graph(["t", "a", "b", "join"], [["t", "a"], ["t", "b"], ["a", "join", "a.ok"], ["b", "join", "b.ok"]]);
    expect(simulateRun(g, { conditions: { "a->join": false, "b->join": false } }).join).toBe("SKIPPED");
    expect(simulateRun(g, { conditions: { "a->join": false, "b->join": true } }).join).toBe("SUCCESS");
  });

  it("chains skips through several levels of a branch not taken", () => {
    const g = graph(["t", "a", "b1", "b2", "b3", "c1"], [["t", "a"], ["a", "b1", "x"], ["b1", "b2"], ["b2", "b3"], ["a", "c1", "!x"]]);
    expect(simulateRun(g, { conditions: { "a->b1": false, "a->c1": true } })).toEqual({
      t: "SUCCESS", a: "SUCCESS", b1: "SKIPPED", b2: "SKIPPED", b3: "SKIPPED", c1: "SUCCESS",
    });
  });

  it("runs a join with a branch skipped deep inside it", () => {
    const g = graph(["t", "a", "b1", "b2", "c1", "join"], [["t", "a"], ["a", "b1", "x"], ["b1", "b2"], ["a", "c1", "!x"], ["b2", "join"], ["c1", "join"]]);
    expect(simulateRun(g, { conditions: { "a->b1": false, "a->c1": true } }).join).toBe("SUCCESS");
  });

  it("stops the run at the first failure by default: nodes that have not run become SKIPPED", () => {
    const g = graph(["t", "a", "b", "a2", "b2"], [["t", "a"], ["t", "b"], ["a", "a2"], ["b", "b2"]]);
    expect(simulateRun(g, { failed: ["a"] })).toEqual({ t: "SUCCESS", a: "FAILED", b: "SKIPPED", a2: "SKIPPED", b2: "SKIPPED" });
    expect(simulateRun(g, { failed: ["a"], haltOnFailure: false })).toEqual({
      t: "SUCCESS", a: "FAILED", b: "SUCCESS", a2: "SKIPPED", b2: "SUCCESS",
    });
  });

  it("skips a join when one of its inputs failed, even if the other ran", () => {
    const g = graph(["t", "a", "b", "join"], [["t", "a"], ["t", "b"], ["a", "join"], ["b", "join"]]);
    expect(simulateRun(g, { failed: ["b"], haltOnFailure: false })).toEqual({ t: "SUCCESS", a: "SUCCESS", b: "FAILED", join: "SKIPPED" });
  });

  it("asks for the outcome of every condition it evaluates", () => {
    expect(() => simulateRun(IF_ELSE_JOIN, { conditions: { "ai->yes": true } })).toThrow("no outcome given for the condition on edge ai->no");
  });
});
