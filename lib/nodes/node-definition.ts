// What a node type's client-safe half declares (lib/nodes/<type>/definition.ts). The graph schema
// (lib/graph/schema.ts), validation, the editor's palette, canvas card and config panel, and docs/node-types.md are
// all built from these objects. Client-safe, and free of zod at run time: a definition's data schema is a function
// of the zod namespace, built once by lib/graph/schema.ts, so the editor (palette, cards, inspector) loads no zod
// (the editor's JavaScript is kept small; zod would weigh about 33 KB gzip of it).
import type { z } from "zod";

/** The zod namespace a definition builds its data schema with. */
export type Zod = typeof z;

/** Field kinds the config panel draws itself (components/editor/form-fields.tsx). */
export const GENERIC_FIELD_KINDS = [
  "text", // one line of plain text
  "textarea", // several lines of plain text
  "number",
  "template", // text with {{ autocomplete of upstream fields
  "expression", // an expression (monospace), with the upstream columns as a hint
  "select",
] as const;

/** Field kinds drawn by a component of their own (components/editor/custom-fields.tsx). */
export const CUSTOM_FIELD_KINDS = ["upload-picker", "ai-outputs", "trigger-panel", "sender-picker"] as const;

export type GenericFieldKind = (typeof GENERIC_FIELD_KINDS)[number];
export type CustomFieldKind = (typeof CUSTOM_FIELD_KINDS)[number];
/** How the config panel renders one data field. */
export type FormFieldKind = GenericFieldKind | CustomFieldKind;

/** How validation checks a templated field: `lone` = exactly one template naming a list; `item` may use {{item.…}}. */
export type TemplateScope = "lone" | "item" | "text";

export interface FormField {
  /** The key in the node's `data` (custom kinds may manage several keys, or none). */
  name: string;
  label: string;
  kind: FormFieldKind;
  placeholder?: string;
  help?: string;
  /** Templated fields (whatever their widget): checked on save and offered upstream references in the editor. */
  template?: TemplateScope;
  multiline?: boolean;
  rows?: number;
  mono?: boolean;
  options?: readonly { value: string; label: string }[];
  min?: number;
  max?: number;
  step?: number;
  /** Fields with a section fold into a <details> of that title below the others. */
  section?: string;
  /** The data key may be absent: emptying the field removes it (checked against the schema by definitions.test.ts). */
  optional?: boolean;
}

export interface NodeDefinition<T extends string = string, S extends z.ZodType = z.ZodType> {
  type: T;
  /**
   * The schema of the node's `data`, built with the zod it is handed; its messages are the
   * API's `invalid_node_data` messages. lib/graph/schema.ts builds it once (`nodeDataSchemas`).
   */
  dataSchema: (zod: Zod) => S;
  label: string;
  /** One line for the palette and the inspector. */
  description: string;
  /** The longer text of docs/node-types.md (data and output). */
  docs: string;
  /** New nodes are called `<idPrefix>_1`, `<idPrefix>_2`… */
  idPrefix: string;
  /** Tailwind classes of the type chip. */
  accent: string;
  /** Data of a node dropped from the palette (it may still be incomplete: the editor shows what is missing). */
  defaultData: () => Record<string, unknown>;
  /** The fields of this node's output that downstream templates can name. */
  outputFields: (data: Record<string, unknown>) => string[];
  /** False for a node that starts the graph and takes no incoming edge. */
  hasInput: boolean;
  /** One line saying what the node does, for its card on the canvas. */
  summary: (data: Record<string, unknown>, context: SummaryContext) => string;
  /** The config panel's fields, in order. */
  form: readonly FormField[];
}

export interface SummaryContext {
  /** Upload id → file name (a DATA_SOURCE card shows "people.csv" rather than an id). */
  uploadNames?: ReadonlyMap<string, string>;
}

/** Keeps the literal `type` and the schema's own type, so the graph schema's union stays exact. */
export function defineNode<T extends string, S extends z.ZodType>(definition: NodeDefinition<T, S>): NodeDefinition<T, S> {
  return definition;
}

/** Keys that never name a field anywhere (AI output names); path lookups are own-property only anyway. */
export const FORBIDDEN_KEYS: readonly string[] = ["__proto__", "constructor", "prototype"];

export const IDENTIFIER_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

export const nonEmpty = (zod: Zod, what: string) => zod.string().min(1, `${what} must not be empty`);

/** Text of a data value for summaries: strings as they are, anything else as "". */
export const text = (value: unknown) => (typeof value === "string" ? value : "");
