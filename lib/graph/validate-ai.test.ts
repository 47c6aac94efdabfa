import { describe, expect, it } from "vitest";
import { validateGraph } from "./validate";

/** A TRIGGER → DATA_SOURCE → AI → OUTPUT graph whose AI node data is `ai`. */
function graph(ai: Record<string, unknown>, outputForEach = "{{ai.items}}") {
  return {
    nodes: [
      { id: "t", type: "TRIGGER", data: {} },
      { id: "src", type: "DATA_SOURCE", data: { uploadId: "upl_x" } },
      { id: "ai", type: "AI", data: { prompt: "Write to {{item.name}}", output: [{ name: "greeting", type: "string" }], ...ai } },
      { id: "out", type: "OUTPUT", data: { forEach: outputForEach, to: "{{item.email}}", subject: "Hi", body: "{{item.greeting}}" } },
    ],
    edges: [
      { source: "t", target: "src" },
      { source: "src", target: "ai" },
      { source: "ai", target: "out" },
    ],
  };
}

const problems = (g: unknown) => validateGraph(g).errors.map((e) => [e.path, e.code]);

describe("the AI node's forEach at save time", () => {
  it("accepts a forEach over a list, {{item.…}} in prompt and system, and an OUTPUT over its items", () => {
    expect(problems(graph({ forEach: "{{src.rows}}", system: "Sign as {{item.owner}}", onItemError: "skip", maxCostUsd: 5, reuseAnswersDays: 7 }))).toEqual([]);
  });

  it("refuses {{item.…}} without forEach, with the path", () => {
    expect(problems(graph({}, "{{src.rows}}"))).toEqual([["graph.nodes[2].data.prompt", "invalid_template"]]);
  });

  it("refuses a forEach that is not a list, and an OUTPUT forEach over a field that is not the items", () => {
    expect(problems(graph({ forEach: "{{src.rowCount}}" }))).toEqual([["graph.nodes[2].data.forEach", "not_a_list"]]);
    expect(problems(graph({ forEach: "{{src.rows}}" }, "{{ai.count}}"))).toEqual([["graph.nodes[3].data.forEach", "not_a_list"]]);
  });

  it("accepts batch mode with forEach only; refuses a reserved output name, and caps or windows out of range", () => {
    const codes = (ai: Record<string, unknown>) => validateGraph(graph({ forEach: "{{src.rows}}", ...ai })).errors.map((e) => [e.path, e.code, e.message]);
    expect(codes({ mode: "batch" })).toEqual([]);
    expect(validateGraph(graph({ mode: "batch" }, "{{src.rows}}")).errors.map((e) => [e.path, e.code])).toContainEqual(["graph.nodes[2].data.mode", "invalid_node_data"]);
    expect(codes({ mode: "later" })[0].slice(0, 2)).toEqual(["graph.nodes[2].data.mode", "invalid_node_data"]);
    expect(codes({ maxCostUsd: 0 })[0].slice(0, 2)).toEqual(["graph.nodes[2].data.maxCostUsd", "invalid_node_data"]);
    expect(codes({ reuseAnswersDays: 31 })[0].slice(0, 2)).toEqual(["graph.nodes[2].data.reuseAnswersDays", "invalid_node_data"]);
    expect(codes({ onItemError: "retry" })[0].slice(0, 2)).toEqual(["graph.nodes[2].data.onItemError", "invalid_node_data"]);
    const once = validateGraph(graph({ prompt: "Hello", output: [{ name: "usage", type: "string" }] }, "{{src.rows}}")).errors;
    expect(once.map((e) => [e.path, e.code])).toEqual([["graph.nodes[2].data.output[0].name", "invalid_node_data"]]);
  });
});
