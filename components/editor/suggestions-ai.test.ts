import { describe, expect, it } from "vitest";
import type { Graph } from "@/lib/client/types";
import { templateSuggestions } from "./suggestions";

const graph = (forEach?: string) =>
  ({
    nodes: [
      { id: "t", type: "TRIGGER", position: { x: 0, y: 0 }, data: {} },
      { id: "src", type: "DATA_SOURCE", position: { x: 0, y: 0 }, data: { uploadId: "upl_1" } },
      { id: "ai", type: "AI", position: { x: 0, y: 0 }, data: { prompt: "", output: [{ name: "greeting", type: "string" }], ...(forEach ? { forEach } : {}) } },
      { id: "out", type: "OUTPUT", position: { x: 0, y: 0 }, data: { forEach: "{{ai.items}}", to: "", subject: "", body: "" } },
    ],
    edges: [
      { id: "e1", source: "t", target: "src" },
      { id: "e2", source: "src", target: "ai" },
      { id: "e3", source: "ai", target: "out" },
    ],
  }) as unknown as Graph;

const refs = (g: Graph, id: string) => templateSuggestions(g, id, { upl_1: ["name", "email"] }).map((s) => s.ref);

describe("{{item.…}} suggestions for AI for each item", () => {
  it("offers the list's columns in an AI node with forEach, not in one without", () => {
    expect(refs(graph("{{src.rows}}"), "ai")).toEqual(expect.arrayContaining(["item.name", "item.email"]));
    expect(refs(graph(), "ai").filter((r) => r.startsWith("item."))).toEqual([]);
  });

  it("offers an OUTPUT over the AI items the declared outputs beside the columns, and the AI node's own fields", () => {
    expect(refs(graph("{{src.rows}}"), "out")).toEqual(expect.arrayContaining(["item.name", "item.greeting", "ai.items", "ai.count", "ai.usage"]));
    expect(refs(graph(), "out")).toEqual(expect.arrayContaining(["ai.greeting", "ai.usage"]));
  });
});
