// The node definitions are the one source of the node types: the graph schema, validation, the executor registry
// and docs/node-types.md must agree with them (the editor's side: components/editor/definitions-ui.test.ts).
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { NODE_TYPES, TEMPLATE_FIELDS, graphNodeSchema, nodeDataSchemas, validateGraph } from "@/lib/graph";
import { nodeDefinition, nodeDefinitions } from "./definitions";
import { GENERIC_FIELD_KINDS } from "./node-definition";
import { nodeTypesMarkdown } from "./node-types-doc";
import { nodeExecutors } from "./registry";

describe("node definitions", () => {
  it("define every node type once, in NODE_TYPES' order", () => {
    expect(nodeDefinitions.map((d) => d.type)).toEqual([...NODE_TYPES]);
    expect(new Set(NODE_TYPES).size).toBe(NODE_TYPES.length);
    for (const type of NODE_TYPES) expect(nodeDefinition(type).type).toBe(type);
  });

  it("agree with the executor registry: one executor per defined type, none for an undefined one", () => {
    expect(Object.keys(nodeExecutors).sort()).toEqual([...NODE_TYPES].sort());
    for (const type of NODE_TYPES) expect(typeof nodeExecutors[type].execute).toBe("function");
  });

  it("are the data schemas of the graph schema", () => {
    for (const d of nodeDefinitions) {
      const node = { id: "n", type: d.type, data: d.defaultData() };
      expect(graphNodeSchema.safeParse(node).success).toBe(nodeDataSchemas[d.type].safeParse(node.data).success);
    }
  });

  it("give a new node data that passes, or names exactly the fields a person must fill in (as before)", () => {
    const problems = Object.fromEntries(
      nodeDefinitions.map((d) => {
        const parsed = nodeDataSchemas[d.type].safeParse(d.defaultData());
        return [d.type, parsed.success ? "valid" : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`)];
      }),
    );
    expect(problems).toEqual({
      TRIGGER: "valid",
      DATA_SOURCE: ["uploadId: uploadId must not be empty"],
      AI: ["prompt: prompt must not be empty"],
      FILTER: ["source: source must not be empty", "expr: expr must not be empty"],
      OUTPUT: ["forEach: forEach must not be empty", "subject: subject must not be empty"],
    });
  });

  it("give fresh default data on every call (a new node never shares its data with another)", () => {
    for (const d of nodeDefinitions) expect(d.defaultData()).not.toBe(d.defaultData());
  });

  it("keep the data schemas' messages", () => {
    expect(nodeDataSchemas.DATA_SOURCE.safeParse({ uploadId: "u", driveFileId: "d" }).error?.issues[0].message).toBe(
      "DATA_SOURCE data must be exactly one of { uploadId } or { driveFileId }, a non-empty string",
    );
    const twice = nodeDataSchemas.AI.safeParse({ prompt: "p", output: [{ name: "a", type: "string" }, { name: "a", type: "string" }] });
    expect(twice.error?.issues[0].message).toBe('Output name "a" is declared twice');
    const result = validateGraph({ nodes: [{ id: "x", type: "NOPE", data: {} }], edges: [] });
    expect(result.errors.map((e) => e.message)).toContain('Node type is "NOPE"; use one of TRIGGER, DATA_SOURCE, AI, FILTER, OUTPUT');
  });

  it("name form fields that are data keys of their schema, each once, optional exactly when the schema says so", () => {
    for (const d of nodeDefinitions) {
      const names = d.form.map((f) => f.name);
      expect(new Set(names).size, d.type).toBe(names.length);
      const shape = (nodeDataSchemas[d.type] as { shape?: Record<string, z.ZodType> }).shape;
      const generic = d.form.filter((f) => (GENERIC_FIELD_KINDS as readonly string[]).includes(f.kind));
      for (const field of generic) {
        expect(shape && field.name in shape, `${d.type}.${field.name}`).toBe(true);
        expect(!!field.optional, `${d.type}.${field.name} optional`).toBe(shape![field.name].safeParse(undefined).success);
      }
    }
  });

  it("build their data schemas only when handed zod (the editor's bundle loads none)", () => {
    const folders = readdirSync(__dirname, { withFileTypes: true }).filter((e) => e.isDirectory() && existsSync(path.join(__dirname, e.name, "definition.ts")));
    expect(folders.length).toBe(nodeDefinitions.length);
    const files = ["definitions.ts", "node-definition.ts", ...folders.map((f) => path.join(f.name, "definition.ts"))];
    for (const file of files) expect(readFileSync(path.join(__dirname, file), "utf8"), file).not.toMatch(/^import (?!type )[^;]*from "zod"/m);
    for (const d of nodeDefinitions) expect(d.dataSchema(z)).not.toBe(nodeDataSchemas[d.type]);
  });

  it("drive which fields validation reads as templates", () => {
    expect(TEMPLATE_FIELDS).toEqual({
      TRIGGER: {},
      DATA_SOURCE: {},
      AI: { forEach: "lone", prompt: "item", system: "item" },
      FILTER: { source: "lone" },
      OUTPUT: { forEach: "lone", to: "item", subject: "item", body: "item", replyTo: "item" },
    });
  });

  it("summarize a node in one line", () => {
    const names = new Map([["upl_1", "people.csv"]]);
    const line = (type: (typeof NODE_TYPES)[number], data: Record<string, unknown>) => nodeDefinition(type).summary(data, { uploadNames: names });
    expect(line("DATA_SOURCE", { uploadId: "upl_1" })).toBe("people.csv");
    expect(line("DATA_SOURCE", { uploadId: "upl_2" })).toBe("Upload upl_2");
    expect(line("DATA_SOURCE", { driveFileId: "f" })).toBe("Drive file f");
    expect(line("FILTER", { expr: "a > 1" })).toBe("where a > 1");
    expect(line("OUTPUT", {})).toBe("Compose the email");
    expect(nodeDefinition("AI").outputFields({ output: [{ name: "score" }, null, { name: "" }] })).toEqual(["score", "usage"]);
    expect(nodeDefinition("AI").outputFields({ forEach: "{{src.rows}}", output: [{ name: "score" }] })).toEqual(["items", "count", "failed", "usage"]);
  });
});

describe("docs/node-types.md", () => {
  it("is the table the definitions make", () => {
    const file = path.resolve(__dirname, "../../docs/node-types.md");
    if (process.env.UPDATE_NODE_DOCS) writeFileSync(file, nodeTypesMarkdown());
    expect(readFileSync(file, "utf8")).toBe(nodeTypesMarkdown());
  });
});
