"use client";
// The config panel's generic fields, drawn from a node definition's form hints (lib/nodes/<type>/definition.ts).
import type { ReactNode } from "react";
import type { ValidationResult } from "@/lib/client/types";
import type { FormField, GenericFieldKind, NodeDefinition } from "@/lib/nodes/node-definition";
import { Field, Input, Select, Textarea, humanize } from "@/components/ui";
import type { Suggestion } from "./suggestions";
import { TemplateField } from "./template-field";

export type Config = Record<string, unknown>;
export type Issue = ValidationResult["errors"][number];

/** Sets a key, or removes it when the value is empty, so optional fields are absent rather than "". */
export function patch(config: Config, key: string, value: unknown): Config {
  const next = { ...config };
  if (value === "" || value === undefined) delete next[key];
  else next[key] = value;
  return next;
}

/** The server's message for one data field of this node (paths look like `graph.nodes[2].data.expr`). */
export function issueFor(issues: Issue[], field: string): string | undefined {
  const message = issues.find((i) => new RegExp(`\\.data\\.${field}(\\b|\\.|\\[|$)`).test(i.path))?.message;
  return message === undefined ? undefined : humanize(message);
}

export interface FieldProps {
  field: FormField;
  definition: NodeDefinition;
  config: Config;
  issues: Issue[];
  onChange: (config: Config) => void;
  /** Upstream references for template fields. */
  suggestions: Suggestion[];
  /** Columns of the uploads upstream, the hint of expression fields. */
  columns: string[];
}

interface ControlProps {
  id: string;
  field: FormField;
  value: unknown;
  set: (value: unknown) => void;
  testId: string;
  suggestions: Suggestion[];
}

/** One control per generic kind: the compiler flags a kind without one. */
const CONTROLS: Record<GenericFieldKind, (props: ControlProps) => ReactNode> = {
  text: ({ id, field, value, set, testId }) => (
    <Input id={id} className={field.mono ? "font-mono" : undefined} value={String(value ?? "")} placeholder={field.placeholder} data-testid={testId} onChange={(e) => set(e.target.value)} />
  ),
  textarea: ({ id, field, value, set, testId }) => (
    <Textarea id={id} rows={field.rows} value={String(value ?? "")} placeholder={field.placeholder} data-testid={testId} onChange={(e) => set(e.target.value)} />
  ),
  number: ({ id, field, value, set, testId }) => (
    <Input
      id={id}
      type="number"
      min={field.min}
      max={field.max}
      step={field.step}
      value={value === undefined ? "" : String(value)}
      data-testid={testId}
      onChange={(e) => set(e.target.value === "" ? "" : Number(e.target.value))}
    />
  ),
  // A `lone` field names a list of upstream nodes: item fields do not exist there.
  template: ({ id, field, value, set, testId, suggestions }) => (
    <TemplateField
      id={id}
      multiline={field.multiline}
      rows={field.rows}
      value={String(value ?? "")}
      onChange={set}
      suggestions={field.template === "lone" ? suggestions.filter((s) => !s.ref.startsWith("item.")) : suggestions}
      testId={testId}
      placeholder={field.placeholder}
    />
  ),
  expression: ({ id, field, value, set, testId }) => (
    <Input id={id} className="font-mono" value={String(value ?? "")} onChange={(e) => set(e.target.value)} data-testid={testId} placeholder={field.placeholder} />
  ),
  select: ({ id, field, value, set, testId }) => (
    <Select id={id} value={String(value ?? "") || field.options?.[0]?.value} onChange={(e) => set(e.target.value)} data-testid={testId}>
      {field.options?.map((option) => (
        <option key={option.value} value={option.value}>
          {option.label}
        </option>
      ))}
    </Select>
  ),
};

export const GENERIC_CONTROLS: ReadonlySet<string> = new Set(Object.keys(CONTROLS));

/** A labelled generic field; an optional data key is removed when emptied, a required one keeps "". */
export function FormFieldView({ field, definition, config, issues, onChange, suggestions, columns }: FieldProps) {
  const set = (value: unknown) => onChange(field.optional ? patch(config, field.name, value) : { ...config, [field.name]: value });
  const Control = CONTROLS[field.kind as GenericFieldKind];
  const hint =
    field.kind === "expression" && columns.length ? (
      <>Fields: {columns.map((c) => <code key={c} className="mr-1 rounded bg-slate-100 px-1 font-mono">{c}</code>)}</>
    ) : (
      field.help
    );
  const testId = `${definition.idPrefix}-${field.name.toLowerCase()}`;
  return (
    <Field label={field.label} error={issueFor(issues, field.name)} hint={hint}>
      {(id) => <Control id={id} field={field} value={config[field.name]} set={set} testId={testId} suggestions={suggestions} />}
    </Field>
  );
}
