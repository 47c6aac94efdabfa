// What the editor knows about each node type: how it looks, its starting data, the fields its
// output offers to downstream templates.
import type { NodeType } from "@/lib/client/types";

export interface NodeKind {
  label: string;
  description: string;
  idPrefix: string;
  accent: string; // Tailwind classes for the type chip
  defaultData: () => Record<string, unknown>;
  outputFields: (data: Record<string, unknown>) => string[];
  hasInput: boolean;
}

export const NODE_KINDS: Record<NodeType, NodeKind> = {
  TRIGGER: {
    label: "Trigger",
    description: "Where every run starts",
    idPrefix: "trigger",
    accent: "bg-violet-100 text-violet-700",
    defaultData: () => ({}),
    outputFields: () => [],
    hasInput: false,
  },
  DATA_SOURCE: {
    label: "Data source",
    description: "Rows from a CSV upload or a Drive file",
    idPrefix: "source",
    accent: "bg-sky-100 text-sky-700",
    defaultData: () => ({ uploadId: "" }),
    outputFields: () => ["rows", "rowCount", "columns"],
    hasInput: true,
  },
  AI: {
    label: "AI",
    description: "Ask a model for structured fields",
    idPrefix: "ai",
    accent: "bg-fuchsia-100 text-fuchsia-700",
    defaultData: () => ({ prompt: "", output: [{ name: "summary", type: "string" }] }),
    outputFields: (data) => (Array.isArray(data.output) ? data.output.map((o: { name?: string }) => o?.name ?? "").filter(Boolean) : []),
    hasInput: true,
  },
  FILTER: {
    label: "Filter",
    description: "Keep the items that match",
    idPrefix: "filter",
    accent: "bg-amber-100 text-amber-800",
    defaultData: () => ({ source: "", expr: "" }),
    outputFields: () => ["items", "count", "filteredOut"],
    hasInput: true,
  },
  OUTPUT: {
    label: "Output",
    description: "Send one email per item",
    idPrefix: "output",
    accent: "bg-emerald-100 text-emerald-700",
    defaultData: () => ({ forEach: "", to: "{{item.email}}", subject: "", body: "", format: "text" }),
    outputFields: () => ["emailsSent"],
    hasInput: true,
  },
};

/** The first free id like `filter_1`, `filter_2` (the trigger is just `trigger`). */
export function nextNodeId(type: NodeType, taken: Set<string>): string {
  const prefix = NODE_KINDS[type].idPrefix;
  if (type === "TRIGGER" && !taken.has(prefix)) return prefix;
  for (let i = 1; ; i++) if (!taken.has(`${prefix}_${i}`)) return `${prefix}_${i}`;
}

/** One line that says what a node does, for the card on the canvas. */
export function summarize(type: NodeType, data: Record<string, unknown>, uploadNames?: Map<string, string>): string {
  const text = (v: unknown) => (typeof v === "string" ? v : "");
  switch (type) {
    case "TRIGGER":
      return "Run manually or through the API";
    case "DATA_SOURCE":
      return data.driveFileId ? `Drive file ${text(data.driveFileId)}` : data.uploadId ? (uploadNames?.get(text(data.uploadId)) ?? `Upload ${text(data.uploadId)}`) : "Choose a CSV";
    case "AI":
      return text(data.prompt) || "Write a prompt";
    case "FILTER":
      return data.expr ? `where ${text(data.expr)}` : "Write an expression";
    case "OUTPUT":
      return data.subject ? `“${text(data.subject)}”` : "Compose the email";
  }
}
