import { describe, expect, it } from "vitest";
import type { Graph } from "@/lib/client/types";
import { listChoices, listItemFields, templateSuggestions } from "./suggestions";

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

describe("the fields of the list a forEach names", () => {
  const chain = {
    nodes: [
      { id: "t", type: "TRIGGER", position: { x: 0, y: 0 }, data: {} },
      { id: "src", type: "DATA_SOURCE", position: { x: 0, y: 0 }, data: { uploadId: "upl_1" } },
      { id: "other", type: "DATA_SOURCE", position: { x: 0, y: 0 }, data: { uploadId: "upl_2" } },
      { id: "keep", type: "FILTER", position: { x: 0, y: 0 }, data: { source: "{{src.rows}}", expr: "true" } },
      { id: "ai", type: "AI", position: { x: 0, y: 0 }, data: { prompt: "", forEach: "{{keep.items}}", output: [{ name: "greeting", type: "string" }, { name: "email", type: "string" }] } },
      { id: "once", type: "AI", position: { x: 0, y: 0 }, data: { prompt: "", output: [{ name: "tags", type: "array" }, { name: "note", type: "string" }] } },
      { id: "out", type: "OUTPUT", position: { x: 0, y: 0 }, data: { forEach: "{{ai.items}}", to: "", subject: "", body: "" } },
    ],
    edges: [
      { id: "e1", source: "t", target: "src" },
      { id: "e2", source: "t", target: "other" },
      { id: "e3", source: "src", target: "keep" },
      { id: "e4", source: "other", target: "keep" },
      { id: "e5", source: "keep", target: "ai" },
      { id: "e6", source: "keep", target: "once" },
      { id: "e7", source: "ai", target: "out" },
      { id: "e8", source: "once", target: "out" },
    ],
  } as unknown as Graph;
  const columns = { upl_1: ["name", "email"], upl_2: ["phone"] };
  const byId = new Map(chain.nodes.map((n) => [n.id, n]));

  it("follows a FILTER back to its upload: only that upload's columns, not every upstream one", () => {
    const items = templateSuggestions(chain, "ai", columns).filter((s) => s.ref.startsWith("item.")).map((s) => s.ref);
    expect(items).toEqual(["item.name", "item.email"]);
  });

  it("adds an AI node's declared outputs to its items, a declared name replacing the column of that name", () => {
    expect(listItemFields("{{ai.items}}", byId, columns)).toEqual([
      { name: "name", hint: "column" },
      { name: "greeting", hint: "ai output" },
      { name: "email", hint: "ai output" },
    ]);
  });

  it("does not know the fields of a list it cannot follow back to an upload", () => {
    expect(listItemFields("{{once.tags}}", byId, columns)).toBeNull();
    expect(listItemFields("{{src.rows}} and more", byId, columns)).toBeNull();
    expect(listItemFields("{{nobody.rows}}", byId, columns)).toBeNull();
    expect(listItemFields("{{src.rows}}", byId, {})).toBeNull();
  });

  it("offers as lists the upstream rows, FILTER items, AI items and AI array outputs", () => {
    expect(listChoices(chain, "out").map((c) => c.ref)).toEqual(["{{ai.items}}", "{{keep.items}}", "{{once.tags}}", "{{other.rows}}", "{{src.rows}}"]);
    expect(listChoices(chain, "ai").map((c) => c.ref)).toEqual(["{{keep.items}}", "{{other.rows}}", "{{src.rows}}"]);
  });
});
