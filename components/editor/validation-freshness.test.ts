import { describe, expect, it } from "vitest";
import type { Graph } from "@/lib/client/types";
import { validateGraph } from "@/lib/graph/validate";
import { serverOnlyIssues } from "./use-validation";

const localValidation = (graph: Graph) => {
  const { valid, errors } = validateGraph(graph);
  return { valid, errors };
};

const graph = (subject: string, uploadId = "upl_1"): Graph => ({
  nodes: [
    { id: "start", type: "TRIGGER", data: {} },
    { id: "src", type: "DATA_SOURCE", data: { uploadId } },
    { id: "mail", type: "OUTPUT", data: { forEach: "{{src.rows}}", to: "{{item.email}}", subject, body: "Hi" } },
  ],
  edges: [
    { source: "start", target: "src" },
    { source: "src", target: "mail" },
  ],
});
const unknownUpload = { path: "graph.nodes[1].data.uploadId", code: "unknown_upload", message: "Upload upl_1 does not exist (or was deleted)", nodeId: "src" };
const unknownColumn = { path: "graph.nodes[2].data.subject", code: "unknown_column", message: '{{item.nmae}}: people.csv has no column "nmae".', nodeId: "mail" };

describe("validation messages never go stale", () => {
  it("the graph's own problems come from the browser at once, for the graph as it is now", () => {
    const broken = graph("Hi {{nowhere.x}}");
    expect(localValidation(broken).errors.map((e) => e.code)).toEqual(["unknown_template_ref"]);
    expect(localValidation(graph("Hi")).errors).toEqual([]);
  });

  it("keeps the server's database findings only while the node they are about is unchanged", () => {
    const checked = graph("Thanks {{item.nmae}}");
    const server = { valid: false, errors: [...localValidation(checked).errors, unknownUpload, unknownColumn] };
    expect(serverOnlyIssues(server, checked, checked, localValidation)).toEqual([unknownUpload, unknownColumn]);
    // The subject was fixed after the check was sent: its column problem goes at once, the upload's stays.
    expect(serverOnlyIssues(server, checked, graph("Thanks {{item.name}}"), localValidation)).toEqual([unknownUpload]);
    // Another upload chosen: nothing said about the old one applies.
    expect(serverOnlyIssues(server, checked, graph("Thanks {{item.nmae}}", "upl_2"), localValidation)).toEqual([unknownColumn]);
  });
});
