import { describe, expect, it } from "vitest";
import { graphSchema } from "@/lib/graph/schema";
import { nextDelay, POLL_MAX_MS, POLL_START_MS } from "@/lib/client/use-run";
import { demoGraph } from "@/components/workflows/demo";
import { flowToGraph, graphToFlow } from "./mapper";
import { nextNodeId } from "./node-kinds";
import { ancestorsOf, openTemplateAt, templateSuggestions } from "./suggestions";

const graph = demoGraph("upl_demo");

describe("mapper", () => {
  it("round-trips a graph with positions unchanged", () => {
    const { nodes, edges } = graphToFlow(graph);
    expect(flowToGraph(nodes, edges)).toEqual(graph);
  });

  it("lays out a graph saved without positions top to bottom, without overlaps", () => {
    const bare = { nodes: graph.nodes.map(({ position: _p, ...n }) => n), edges: graph.edges };
    const { nodes } = graphToFlow(bare);
    const ys = nodes.map((n) => n.position.y);
    expect(ys).toEqual([...ys].sort((a, b) => a - b));
    expect(new Set(ys).size).toBe(nodes.length);
  });

  it("keeps an edge condition and drops an empty one", () => {
    const withConditions = { ...graph, edges: [{ source: "trigger", target: "customers", condition: " x.y > 1 " }, { source: "customers", target: "happy", condition: "" }] };
    const { nodes, edges } = graphToFlow(withConditions);
    expect(flowToGraph(nodes, edges).edges).toEqual([{ source: "trigger", target: "customers", condition: "x.y > 1" }, { source: "customers", target: "happy" }]);
  });
});

describe("template suggestions", () => {
  it("offers only ancestors' fields, plus the upload's columns as item fields inside OUTPUT", () => {
    const refs = templateSuggestions(graph, "thank_you", { upl_demo: ["name", "email"] }).map((s) => s.ref);
    expect(refs).toEqual(expect.arrayContaining(["customers.rows", "customers.rowCount", "happy.items", "happy.filteredOut", "item.name", "item.email"]));
    expect(refs.some((r) => r.startsWith("thank_you."))).toBe(false);
    expect(templateSuggestions(graph, "happy", { upl_demo: ["name"] }).map((s) => s.ref)).not.toContain("item.name");
  });

  it("walks every path upstream", () => {
    expect(ancestorsOf(graph, "thank_you").sort()).toEqual(["customers", "happy", "trigger"]);
    expect(ancestorsOf(graph, "trigger")).toEqual([]);
  });

  it("finds the reference being typed after an open {{", () => {
    expect(openTemplateAt("Hi {{ item.na", 13)).toEqual({ start: 6, partial: "item.na" });
    expect(openTemplateAt("Hi {{item.name}} there", 22)).toBeNull();
  });
});

describe("ids and polling", () => {
  it("numbers new nodes after the ones already taken", () => {
    expect(nextNodeId("FILTER", new Set(["filter_1"]))).toBe("filter_2");
    expect(nextNodeId("TRIGGER", new Set())).toBe("trigger");
  });

  it("backs off from 1 s by ×1.5 up to 5 s", () => {
    const delays = [POLL_START_MS];
    while (delays.length < 7) delays.push(nextDelay(delays.at(-1)!));
    expect(delays).toEqual([1000, 1500, 2250, 3375, 5000, 5000, 5000]);
    expect(POLL_MAX_MS).toBe(5000);
  });
});

describe("demo workflow", () => {
  it("is a graph the contract's schema accepts", () => {
    expect(graphSchema.safeParse(graph).success).toBe(true);
  });
});

describe("node overlays", () => {
  it("groups validation errors by node and adds the shown run's result", async () => {
    const { nodeOverlays } = await import("./use-overlays");
    const validation = { valid: false, errors: [
      { nodeId: "a", message: "one", code: "x" },
      { nodeId: "a", message: "two", code: "x" },
      { message: "graph-level", code: "y" },
    ] } as unknown as Parameters<typeof nodeOverlays>[0];
    const run = { nodes: { a: { status: "FAILED" }, b: { status: "SUCCESS" } } } as unknown as Parameters<typeof nodeOverlays>[1];
    const map = nodeOverlays(validation, run);
    expect(map.get("a")).toEqual({ errors: ["one", "two"], run: { status: "FAILED" } });
    expect(map.get("b")).toEqual({ run: { status: "SUCCESS" } });
    expect(nodeOverlays(null, null).size).toBe(0);
  });
});
