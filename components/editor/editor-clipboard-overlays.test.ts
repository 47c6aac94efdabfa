// Pure pieces of the editor: paste with renamed references, edge errors on edges, words for field names.
import { describe, expect, it } from "vitest";
import { humanize } from "@/components/ui/format";
import { graphToFlow } from "./mapper";
import { copySelection, pasteInto } from "./use-clipboard";
import { edgeIssues, nodeOverlays } from "./use-overlays";

const graph = {
  nodes: [
    { id: "start", type: "TRIGGER" as const, data: {}, position: { x: 0, y: 0 } },
    { id: "src", type: "DATA_SOURCE" as const, data: { uploadId: "upl_x" }, position: { x: 0, y: 150 } },
    { id: "happy", type: "FILTER" as const, data: { source: "{{src.rows}}", expr: "rating >= 4 && happy_score > 1" }, position: { x: 0, y: 300 } },
    { id: "mail", type: "OUTPUT" as const, data: { forEach: "{{ happy.items }}", to: "{{item.email}}", subject: "Hi", body: "{{happy.count}} kept" }, position: { x: 0, y: 450 } },
  ],
  edges: [
    { source: "start", target: "src" },
    { source: "src", target: "happy" },
    { source: "happy", target: "mail", condition: "happy.count > 0" },
  ],
};

describe("paste", () => {
  it("gives pasted nodes fresh ids, renames references among them, and places them beside the originals", () => {
    const doc = graphToFlow(graph);
    doc.nodes = doc.nodes.map((n) => ({ ...n, selected: n.id === "happy" || n.id === "mail" }));
    const pasted = pasteInto(doc, copySelection(doc)!);
    const byId = new Map(pasted.nodes.map((n) => [n.id, n]));
    expect([...byId.keys()]).toEqual(["start", "src", "happy", "mail", "filter_1", "output_1"]);
    expect(byId.get("output_1")!.data.config.forEach).toBe("{{ filter_1.items }}");
    expect(byId.get("output_1")!.data.config.body).toBe("{{filter_1.count}} kept");
    // A field that merely starts with the node's name is not a reference to it.
    expect(byId.get("filter_1")!.data.config.expr).toBe("rating >= 4 && happy_score > 1");
    expect(byId.get("filter_1")!.data.config.source).toBe("{{src.rows}}");
    expect(pasted.edges.find((e) => e.id === "filter_1->output_1")?.data).toEqual({ condition: "filter_1.count > 0" });
    expect(byId.get("filter_1")!.position.x).toBeGreaterThan(200);
    expect(pasted.nodes.filter((n) => n.selected).map((n) => n.id)).toEqual(["filter_1", "output_1"]);
  });

  it("never pastes a second TRIGGER into a graph that has one", () => {
    const doc = graphToFlow(graph);
    doc.nodes = doc.nodes.map((n) => ({ ...n, selected: n.id === "start" || n.id === "src" }));
    const pasted = pasteInto(doc, copySelection(doc)!);
    expect(pasted.nodes.filter((n) => n.data.type === "TRIGGER")).toHaveLength(1);
    expect(pasted.nodes.map((n) => n.id)).toContain("source_1");
  });
});

describe("validation overlays", () => {
  it("puts a condition's error on its edge, not on the node it leads to", () => {
    const validation = {
      valid: false,
      errors: [
        { path: "graph.edges[2].condition", code: "invalid_expression", message: 'Unknown name "nope"', nodeId: "mail" },
        { path: "graph.nodes[3].data.forEach", code: "invalid_node_data", message: "forEach must not be empty", nodeId: "mail" },
      ],
    };
    expect(edgeIssues(validation, graph.edges).get("happy->mail")).toEqual(['Unknown name "nope"']);
    expect(nodeOverlays(validation, null).get("mail")?.errors).toEqual(["“For each” must not be empty"]);
  });

  it("words field names and drops the pointer to the errors array", () => {
    expect(humanize("uploadId must not be empty")).toBe("The upload must not be empty");
    expect(humanize("The graph has 2 problems: see `errors`. Nothing was saved.")).toBe("The graph has 2 problems. Nothing was saved.");
    expect(humanize("Rating must be a number")).toBe("Rating must be a number");
  });
});
