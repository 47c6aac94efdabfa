import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { referencedDriveFiles, referencedUploads, validateGraph, type GraphError } from "./validate";
import { graphJsonSchema, graphSchema, type Graph } from "./schema";

type Fixture = { description: string; graph: unknown; expected: { code: string; path: string; nodeId?: string }[] };

const FIXTURE_DIR = path.join(__dirname, "__fixtures__");
const fixtures = readdirSync(FIXTURE_DIR)
  .filter((file) => file.endsWith(".json"))
  .map((file) => ({ file, ...(JSON.parse(readFileSync(path.join(FIXTURE_DIR, file), "utf8")) as Fixture) }));

const ALL_CODES = [
  "duplicate_node_id", "invalid_node_id", "trigger_count", "trigger_has_inputs", "no_output", "unknown_edge_endpoint",
  "duplicate_edge", "self_loop", "cycle", "unreachable_node", "invalid_node_data", "invalid_template",
  "unknown_template_ref", "template_ref_not_upstream", "invalid_expression", "too_large",
];

const key = (error: { code: string; path: string; nodeId?: string }) => `${error.path} ${error.code} ${error.nodeId ?? "-"}`;
const shape = (errors: GraphError[]) => errors.map(key).sort();

describe("validateGraph on JSON fixtures", () => {
  it.each(fixtures)("$file: $description", ({ graph, expected }) => {
    const result = validateGraph(graph);
    expect(shape(result.errors)).toEqual(expected.map(key).sort());
    expect(result.valid).toBe(expected.length === 0);
    for (const error of result.errors) {
      expect(error.path.startsWith("graph")).toBe(true);
      expect(error.message.length).toBeGreaterThan(10);
    }
  });

  it("covers every graph error code but unknown_upload (added by the workflows service)", () => {
    const seen = new Set(fixtures.flatMap((fixture) => fixture.expected.map((error) => error.code)));
    seen.add("too_large"); // built in code below: a fixture of 10,000 nodes would be a 1 MB file
    expect(ALL_CODES.filter((code) => !seen.has(code))).toEqual([]);
  });

  it("returns the parsed graph for every valid fixture, and for a well-shaped graph with semantic errors", () => {
    for (const fixture of fixtures.filter((candidate) => candidate.expected.length === 0)) {
      expect(validateGraph(fixture.graph).graph).toEqual(fixture.graph);
    }
    const cyclic = fixtures.find((fixture) => fixture.file === "cycle.json")!;
    expect(validateGraph(cyclic.graph).graph).toEqual(cyclic.graph);
    const badData = fixtures.find((fixture) => fixture.file === "invalid-node-data.json")!;
    expect(validateGraph(badData.graph).graph).toBeNull();
  });
});

describe("validateGraph messages and edge cases", () => {
  it("gives an expression syntax error with its position", () => {
    const fixture = fixtures.find((candidate) => candidate.file === "invalid-expression.json")!;
    const errors = validateGraph(fixture.graph).errors;
    expect(errors.find((error) => error.nodeId === "f1")!.message).toBe("Unexpected end of expression at position 12");
    expect(errors.find((error) => error.path === "graph.edges[11].condition")!.message).toMatch(/no item/);
    expect(errors.find((error) => error.path === "graph.edges[12].condition")!.message).toMatch(/Unknown name "ghost"/);
    expect(errors.find((error) => error.nodeId === "f8")!.message).toMatch(/"out" is a node that does not run before/);
  });

  it("names the template and the node in template errors", () => {
    const fixture = fixtures.find((candidate) => candidate.file === "template-ref-not-upstream.json")!;
    const messages = validateGraph(fixture.graph).errors.map((error) => error.message);
    expect(messages).toContain('{{f.count}} names node "f", which does not run before "ai"; connect it upstream');
  });

  it("answers 10,000 nodes with too_large at once, without per-node work", () => {
    // Counted, not timed: every read of a list's element counts; only the lists' lengths may be read.
    let touched = 0;
    const counted = <T extends object>(list: T[]) =>
      new Proxy(list, {
        get(target, key, receiver) {
          if (typeof key === "string" && /^\d+$/.test(key)) touched++;
          return Reflect.get(target, key, receiver);
        },
      });
    const nodes = counted(Array.from({ length: 10_000 }, (_, i) => ({ id: `n${i}`, type: "DATA_SOURCE", data: { uploadId: "u" } })));
    const edges = counted(Array.from({ length: 10_000 }, (_, i) => ({ source: `n${i}`, target: `n${i + 1}` })));
    const result = validateGraph({ nodes, edges });
    expect(touched).toBe(0);
    expect(result).toEqual({
      valid: false,
      graph: null,
      errors: [
        { code: "too_large", path: "graph.nodes", message: "A graph has at most 200 nodes; this one has 10000" },
        { code: "too_large", path: "graph.edges", message: "A graph has at most 1000 edges; this one has 10000" },
      ],
    });
  });

  it("accepts exactly 200 nodes and 1000 edges", () => {
    const nodes: unknown[] = [{ id: "t", type: "TRIGGER", data: {} }];
    const edges: unknown[] = [];
    for (let i = 1; i < 199; i++) {
      nodes.push({ id: `s${i}`, type: "DATA_SOURCE", data: { uploadId: `u${i}` } });
      edges.push({ source: "t", target: `s${i}` });
    }
    nodes.push({ id: "out", type: "OUTPUT", data: { forEach: "{{s1.rows}}", to: "a@example.com", subject: "s", body: "" } });
    for (let i = 1; i < 199; i++) edges.push({ source: `s${i}`, target: "out" });
    for (let gap = 1; edges.length < 1000; gap++) {
      for (let i = 1; i + gap < 199 && edges.length < 1000; i++) edges.push({ source: `s${i}`, target: `s${i + gap}` });
    }
    expect(nodes).toHaveLength(200);
    expect(validateGraph({ nodes, edges }).errors).toEqual([]);
    expect(validateGraph({ nodes: [...nodes, nodes[1]], edges }).errors.map((error) => error.code)).toEqual(["too_large"]);
  });

  it.each([[null], [42], ["graph"], [[]], [undefined]])("rejects a graph that is %j", (input) => {
    expect(validateGraph(input)).toEqual({
      valid: false,
      graph: null,
      errors: [{ code: "invalid_graph", path: "graph", message: "The graph must be an object with nodes and edges" }],
    });
  });

  it("keeps __proto__ keys from JSON inert and reported", () => {
    const input = JSON.parse(
      '{"nodes":[{"id":"t","type":"TRIGGER","data":{"__proto__":{"polluted":true}}}],"edges":[],"__proto__":{"x":1}}',
    );
    const errors = validateGraph(input).errors;
    expect(errors).toContainEqual(expect.objectContaining({ code: "invalid_node_data", path: "graph.nodes[0].data.__proto__" }));
    expect(errors).toContainEqual(expect.objectContaining({ code: "invalid_graph", path: "graph.__proto__" }));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("reports edges of the wrong shape without crashing", () => {
    const fixture = fixtures.find((candidate) => candidate.file === "valid-linear.json")!;
    const graph = structuredClone(fixture.graph) as { nodes: unknown[]; edges: unknown[] };
    graph.edges.push("t->src", { source: "trigger", target: 5, condition: 7 }, { source: "f", target: "out", label: "x" });
    expect(shape(validateGraph(graph).errors)).toEqual(
      [
        "graph.edges[4] invalid_graph -",
        "graph.edges[5].condition invalid_expression -",
        "graph.edges[5].target unknown_edge_endpoint -",
        "graph.edges[6].label invalid_graph -",
        "graph.edges[6] duplicate_edge out",
      ].sort(),
    );
  });

  it("checks the syntax of a condition on an edge with an unknown endpoint", () => {
    const fixture = fixtures.find((candidate) => candidate.file === "valid-linear.json")!;
    const graph = structuredClone(fixture.graph) as Graph;
    graph.edges.push({ source: "ghost", target: "out", condition: "a = 1" });
    const errors = validateGraph(graph).errors;
    expect(errors.map((error) => error.code).sort()).toEqual(["invalid_expression", "unknown_edge_endpoint"]);
    expect(errors.find((error) => error.code === "invalid_expression")!.message).toBe('Unexpected "=" at position 2 (use "==" to compare)');
  });
});

describe("referencedUploads / referencedDriveFiles", () => {
  it("lists each DATA_SOURCE's upload or Drive file with its path", () => {
    const fixture = fixtures.find((candidate) => candidate.file === "valid-fan-out-drive.json")!;
    const graph = graphSchema.parse(fixture.graph);
    expect(referencedUploads(graph)).toEqual([]);
    expect(referencedDriveFiles(graph)).toEqual([{ nodeId: "sheet", driveFileId: "1AbCdEf", path: "graph.nodes[1].data.driveFileId" }]);
    const linear = graphSchema.parse(fixtures.find((candidate) => candidate.file === "valid-linear.json")!.graph);
    expect(referencedUploads(linear)).toEqual([{ nodeId: "src", uploadId: "upl_customers", path: "graph.nodes[1].data.uploadId" }]);
  });
});

describe("graphJsonSchema", () => {
  it("describes the node union, the id pattern and the strict objects", () => {
    const schema = graphJsonSchema() as { properties: { nodes: { items: { oneOf?: unknown[]; anyOf?: unknown[] } } } };
    const text = JSON.stringify(schema);
    const variants = schema.properties.nodes.items.oneOf ?? schema.properties.nodes.items.anyOf;
    expect(variants).toHaveLength(5);
    expect(text).toContain("^[A-Za-z_][A-Za-z0-9_]{0,31}$");
    expect(text).toContain('"additionalProperties":false');
    for (const type of ["TRIGGER", "DATA_SOURCE", "AI", "FILTER", "OUTPUT"]) expect(text).toContain(`"const":"${type}"`);
  });
});
