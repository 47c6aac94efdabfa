// The editor's palette and config panel are drawn from the node definitions (lib/nodes/<type>/definition.ts):
// every type in the palette with its description, every form field in the panel with its label and control.
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { createElement, type ReactElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { nodeDefinitions } from "@/lib/nodes/definitions";
import { CUSTOM_FIELD_KINDS, GENERIC_FIELD_KINDS } from "@/lib/nodes/node-definition";
import { ConfigPanel } from "./config-panel";
import { CUSTOM_FIELDS } from "./custom-fields";
import { GENERIC_CONTROLS } from "./form-fields";
import { nextNodeId, summarize } from "./node-kinds";
import { Palette } from "./palette";

const render = (element: ReactElement) =>
  renderToStaticMarkup(createElement(QueryClientProvider, { client: new QueryClient() }, element));

const escape = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

const graph = {
  nodes: [
    { id: "trigger", type: "TRIGGER" as const, data: {} },
    { id: "source_1", type: "DATA_SOURCE" as const, data: { uploadId: "upl_1" } },
  ],
  edges: [{ source: "trigger", target: "source_1" }],
};

describe("palette", () => {
  it("offers every definition, in order, with its chip colour and description", () => {
    const html = render(createElement(Palette, { onAdd: () => {} }));
    const order = [...html.matchAll(/data-testid="palette-([A-Z_]+)"/g)].map((m) => m[1]);
    expect(order).toEqual(nodeDefinitions.map((d) => d.type));
    for (const d of nodeDefinitions) {
      expect(html).toContain(d.description);
      expect(html).toContain(d.accent);
    }
  });
});

describe("config panel", () => {
  it("has a control for every field kind a definition may name", () => {
    expect([...GENERIC_CONTROLS].sort()).toEqual([...GENERIC_FIELD_KINDS].sort());
    expect(Object.keys(CUSTOM_FIELDS).sort()).toEqual([...CUSTOM_FIELD_KINDS].sort());
  });

  it("renders each definition's generic fields with their labels, test ids and placeholders, and its section", () => {
    for (const d of nodeDefinitions) {
      const html = render(
        createElement(ConfigPanel, {
          nodeId: `${d.idPrefix}_9`,
          type: d.type,
          config: d.defaultData(),
          graph: { nodes: [...graph.nodes, { id: `${d.idPrefix}_9`, type: d.type, data: d.defaultData() }], edges: [...graph.edges, { source: "source_1", target: `${d.idPrefix}_9` }] },
          issues: [],
          columnsByUpload: { upl_1: ["email", "rating"] },
          onChange: () => {},
          onRename: () => null,
          onDelete: () => {},
        }),
      );
      expect(html, d.type).toContain(d.description);
      // The AI node's "For each" is drawn as the Once / For each item choice, and "When an item fails" only beside a list.
      const drawnByPanel = (name: string) => d.type === "AI" && (name === "forEach" || name === "onItemError");
      if (d.type === "AI") expect(html).toContain('data-testid="ai-calls-each"');
      for (const field of d.form.filter((f) => (GENERIC_FIELD_KINDS as readonly string[]).includes(f.kind) && !drawnByPanel(f.name))) {
        expect(html, `${d.type}.${field.name}`).toContain(`>${field.label}</label>`);
        expect(html, `${d.type}.${field.name}`).toContain(`data-testid="${d.idPrefix}-${field.name.toLowerCase()}"`);
        if (field.placeholder) expect(html).toContain(`placeholder="${escape(field.placeholder)}"`);
        if (field.section) expect(html).toContain(`<summary class="cursor-pointer text-sm font-medium text-slate-700">${field.section}</summary>`);
      }
    }
  });

  it("draws the custom fields: the upload picker, the AI output list", () => {
    const panel = (type: "DATA_SOURCE" | "AI") =>
      render(createElement(ConfigPanel, { nodeId: "n", type, config: nodeDefinitions.find((d) => d.type === type)!.defaultData(), graph, issues: [], columnsByUpload: {}, onChange: () => {}, onRename: () => null, onDelete: () => {} }));
    expect(panel("DATA_SOURCE")).toContain('data-testid="upload-select"');
    expect(panel("AI")).toContain('data-testid="ai-output-name-0"');
  });

  it("shows the upstream columns as the expression's hint", () => {
    const html = render(createElement(ConfigPanel, { nodeId: "filter_1", type: "FILTER", config: { source: "", expr: "" }, graph: { nodes: [...graph.nodes, { id: "filter_1", type: "FILTER", data: {} }], edges: [...graph.edges, { source: "source_1", target: "filter_1" }] }, issues: [], columnsByUpload: { upl_1: ["email", "rating"] }, onChange: () => {}, onRename: () => null, onDelete: () => {} }));
    expect(html).toContain('<code class="mr-1 rounded bg-slate-100 px-1 font-mono">rating</code>');
  });
});

describe("canvas cards and ids", () => {
  it("take the summary and the id prefix from the definitions", () => {
    expect(summarize("DATA_SOURCE", { uploadId: "upl_1" }, new Map([["upl_1", "people.csv"]]))).toBe("people.csv");
    expect(summarize("TRIGGER", {})).toBe("Run manually or through the API");
    expect(nextNodeId("DATA_SOURCE", new Set(["source_1"]))).toBe("source_2");
  });
});
