// "Try a demo": a sample CSV made in the browser, uploaded like any file, and a ready workflow that
// reads it, keeps the happy customers and writes to each of them.
import { api } from "@/lib/client/api";
import { uploadCsv } from "@/lib/client/upload";
import type { Graph, Workflow } from "@/lib/client/types";

const PEOPLE: [string, string, string, number][] = [
  ["Ada Lovelace", "ada@example.com", "Analytical Engines", 5],
  ["Grace Hopper", "grace@example.com", "Compilers Inc", 4],
  ["Alan Turing", "alan@example.com", "Bletchley Labs", 3],
  ["Katherine Johnson", "katherine@example.com", "Orbital Math", 5],
  ["Edsger Dijkstra", "edsger@example.com", "Shortest Paths", 2],
  ["Barbara Liskov", "barbara@example.com", "Substitution Co", 4],
];

export function demoCsvFile(): File {
  const lines = ["name,email,company,rating", ...PEOPLE.map((p) => p.map(csvCell).join(","))];
  return new File([lines.join("\n") + "\n"], "demo-customers.csv", { type: "text/csv" });
}

function csvCell(value: string | number): string {
  const text = String(value);
  return /[",\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function demoGraph(uploadId: string): Graph {
  return {
    nodes: [
      { id: "trigger", type: "TRIGGER", data: {}, position: { x: 0, y: 0 } },
      { id: "customers", type: "DATA_SOURCE", data: { uploadId }, position: { x: 0, y: 140 } },
      { id: "happy", type: "FILTER", data: { source: "{{customers.rows}}", expr: "rating >= 4" }, position: { x: 0, y: 280 } },
      {
        id: "thank_you",
        type: "OUTPUT",
        data: {
          forEach: "{{happy.items}}",
          to: "{{item.email}}",
          subject: "Thank you, {{item.name}}!",
          body: "Hi {{item.name}},\n\nThanks for rating us {{item.rating}}/5. Everyone at {{item.company}} is welcome to our beta.\n\n— The Flowmail team",
          format: "text",
        },
        position: { x: 0, y: 420 },
      },
    ],
    edges: [
      { source: "trigger", target: "customers" },
      { source: "customers", target: "happy" },
      { source: "happy", target: "thank_you" },
    ],
  };
}

export async function createDemoWorkflow(): Promise<Workflow> {
  const upload = await uploadCsv(demoCsvFile());
  return api.post<Workflow>("/api/workflows", { name: "Demo: thank happy customers", graph: demoGraph(upload.uploadId) });
}
