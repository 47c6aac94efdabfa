// FILTER's client-safe half: keeps the elements of a list for which an expression is true.
import { defineNode, nonEmpty, text, type Zod } from "../node-definition";

export const buildFilterDataSchema = (zod: Zod) =>
  zod.strictObject({
    source: nonEmpty(zod, "source"),
    expr: nonEmpty(zod, "expr"),
  });

export const filterDefinition = defineNode({
  type: "FILTER",
  dataSchema: buildFilterDataSchema,
  label: "Filter",
  description: "Keep the items that match",
  docs: "Keeps the elements of `source` (a template naming an array) for which `expr` is true. Output: { items, count, filteredOut }.",
  idPrefix: "filter",
  accent: "bg-amber-100 text-amber-800",
  defaultData: () => ({ source: "", expr: "" }),
  outputFields: () => ["items", "count", "filteredOut"],
  hasInput: true,
  summary: (data) => (data.expr ? `where ${text(data.expr)}` : "Write an expression"),
  form: [
    { name: "source", label: "Source", kind: "template", template: "lone", placeholder: "{{source_1.rows}}", help: "An array from upstream, e.g. {{source_1.rows}}." },
    {
      name: "expr",
      label: "Keep items where",
      kind: "expression",
      placeholder: "rating >= 4",
      help: 'e.g. rating >= 4 && contains(lower(email), "@example.com")',
    },
  ],
});
