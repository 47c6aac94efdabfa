// docs/node-types.md, written from the node definitions; lib/nodes/definitions.test.ts fails when the file differs
// (UPDATE_NODE_DOCS=1 npx vitest run lib/nodes/definitions.test.ts rewrites it).
import { nodeDefinitions } from "./definitions";

const cell = (value: string) => value.replace(/\|/g, "\\|").replace(/\n/g, " ");

export function nodeTypesMarkdown(): string {
  const rows = nodeDefinitions.map((definition) => {
    const fields = definition.form.map((field) => `${field.label} (\`${field.name}\`, ${field.kind})`).join("; ");
    return `| ${definition.type} | ${cell(definition.label)} | ${cell(definition.docs)} | ${cell(fields)} | \`${JSON.stringify(definition.defaultData())}\` |`;
  });
  return [
    "# Node types",
    "",
    "Generated from `lib/nodes/<type>/definition.ts` (listed in `lib/nodes/definitions.ts`); do not edit by hand.",
    "`lib/nodes/definitions.test.ts` fails when this file is out of date; `UPDATE_NODE_DOCS=1 npx vitest run",
    "lib/nodes/definitions.test.ts` rewrites it. The data's full JSON Schema is served at `GET /api/schemas/graph`.",
    "",
    "| Type | Label | Data and output | Editor fields | A new node's data |",
    "|---|---|---|---|---|",
    ...rows,
    "",
    "## Adding a node type",
    "",
    "1. `lib/nodes/<type>/definition.ts`: a `defineNode({ type, dataSchema, label, description, docs, idPrefix, accent,",
    "   defaultData, outputFields, hasInput, summary, form })`; `dataSchema(zod)` builds the data schema with the zod it",
    "   is handed, so the file imports no zod at run time (client-safe; the editor loads no zod).",
    "2. `lib/nodes/<type>/execute.ts`: its `NodeExecutor` (server-only), with its tests beside it.",
    "3. One entry in `lib/nodes/definitions.ts` and one in `lib/nodes/registry.ts`.",
    "",
    "The graph schema, validation (templates and expressions named by the form fields), the editor's palette, canvas",
    "card and config panel, and this page follow. A form field of a new kind needs a renderer in",
    "`components/editor/form-fields.tsx` (generic kinds) or `components/editor/custom-fields.tsx` (custom components).",
    "",
  ].join("\n");
}
