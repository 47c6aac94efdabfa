"use client";
// The inspector of a selected node: its id, its problems, and the fields its definition lists
// (lib/nodes/<type>/definition.ts `form`): generic ones from form-fields.tsx, custom ones from custom-fields.tsx.
import { useMemo, useState } from "react";
import type { Graph, NodeType } from "@/lib/client/types";
import { nodeDefinition } from "@/lib/nodes/definitions";
import { GENERIC_FIELD_KINDS, type CustomFieldKind, type FormField, type NodeDefinition } from "@/lib/nodes/node-definition";
import { Button, Field, Input, cx, humanize } from "@/components/ui";
import { AiForEachField } from "./ai-panel";
import { CUSTOM_FIELDS } from "./custom-fields";
import { FormFieldView, type Config, type Issue } from "./form-fields";
import { ancestorsOf, templateSuggestions, upstreamColumns } from "./suggestions";

interface PanelProps {
  nodeId: string;
  type: NodeType;
  config: Config;
  graph: Graph;
  issues: Issue[];
  columnsByUpload: Record<string, string[]>;
  onChange: (config: Config) => void;
  onRename: (newId: string) => string | null;
  onDelete: () => void;
}

const isGeneric = (field: FormField) => (GENERIC_FIELD_KINDS as readonly string[]).includes(field.kind);

export function ConfigPanel(props: PanelProps) {
  const { nodeId, type } = props;
  const definition = nodeDefinition(type);
  const general = props.issues.filter((i) => !/\.data\./.test(i.path));
  return (
    <div className="space-y-5 p-4" data-testid="config-panel">
      <div className="flex items-start justify-between gap-2">
        <div>
          <span className={cx("rounded px-1.5 py-0.5 text-[10px] font-semibold tracking-wide", definition.accent)}>{type}</span>
          <p className="mt-1 text-xs text-slate-500">{definition.description}</p>
        </div>
        <Button variant="danger" size="sm" onClick={props.onDelete} data-testid="delete-node">
          Delete
        </Button>
      </div>
      <NodeIdField nodeId={nodeId} onRename={props.onRename} />
      {general.length > 0 && (
        <ul className="space-y-1 rounded-lg bg-red-50 px-3 py-2 text-xs text-red-700" data-testid="panel-issues">
          {general.map((i, n) => (
            <li key={n}>{humanize(i.message)}</li>
          ))}
        </ul>
      )}
      <DefinitionForm definition={definition} {...props} />
    </div>
  );
}

/** The definition's fields in order; fields with a `section` fold into a <details> of that title below them. */
function DefinitionForm({ definition, nodeId, config, graph, issues, columnsByUpload, onChange }: PanelProps & { definition: NodeDefinition }) {
  const suggestions = useMemo(() => templateSuggestions(graph, nodeId, columnsByUpload), [graph, nodeId, columnsByUpload]);
  const columns = useMemo(() => {
    const ancestors = new Set(ancestorsOf(graph, nodeId));
    return upstreamColumns(graph.nodes.filter((n) => ancestors.has(n.id)), columnsByUpload);
  }, [graph, nodeId, columnsByUpload]);
  const render = (field: FormField) => {
    if (definition.type === "AI") {
      const ai = renderAiField(field, { definition, nodeId, config, graph, issues, columnsByUpload, onChange }, suggestions, columns);
      if (ai !== undefined) return ai;
    }
    if (!isGeneric(field)) {
      const Custom = CUSTOM_FIELDS[field.kind as CustomFieldKind];
      return <Custom key={field.name} nodeId={nodeId} config={config} issues={issues} onChange={onChange} />;
    }
    return <FormFieldView key={field.name} field={field} definition={definition} config={config} issues={issues} onChange={onChange} suggestions={suggestions} columns={columns} />;
  };
  const sections = [...new Set(definition.form.flatMap((f) => (f.section ? [f.section] : [])))];
  return (
    <div className="space-y-4">
      {definition.form.filter((f) => !f.section).map(render)}
      {sections.map((section) => (
        <details key={section} className="rounded-lg bg-slate-50 px-3 py-2">
          <summary className="cursor-pointer text-sm font-medium text-slate-700">{section}</summary>
          <div className="mt-3 space-y-3">
            {definition.form.filter((f) => f.section === section).map(render)}
          </div>
        </details>
      ))}
    </div>
  );
}

/**
 * The AI node's "For each" is the Once / For each item choice, and "When an item fails" shows beside it (it means
 * nothing for one call); its system prompt offers template suggestions. Undefined: the field is drawn as the
 * definition says.
 */
function renderAiField(
  field: FormField,
  props: Pick<PanelProps, "nodeId" | "config" | "graph" | "issues" | "columnsByUpload" | "onChange"> & { definition: NodeDefinition },
  suggestions: ReturnType<typeof templateSuggestions>,
  columns: string[],
) {
  const { config, definition } = props;
  if (field.name === "onItemError") return null;
  // The system prompt is templated like the prompt ({{item.…}} with forEach): it gets the same suggestions.
  if (field.name === "system") {
    const templated: FormField = { ...field, kind: "template", multiline: true };
    return <FormFieldView key={field.name} field={templated} definition={definition} config={config} issues={props.issues} onChange={props.onChange} suggestions={suggestions} columns={columns} />;
  }
  if (field.name !== "forEach") return undefined;
  const itemError = definition.form.find((f) => f.name === "onItemError");
  return (
    <div key={field.name} className="space-y-3">
      <AiForEachField {...props} suggestions={suggestions} />
      {typeof config.forEach === "string" && config.forEach !== "" && itemError && (
        <FormFieldView field={itemError} definition={definition} config={config} issues={props.issues} onChange={props.onChange} suggestions={suggestions} columns={columns} />
      )}
    </div>
  );
}

function NodeIdField({ nodeId, onRename }: { nodeId: string; onRename: (id: string) => string | null }) {
  const [draft, setDraft] = useState(nodeId);
  const [error, setError] = useState<string | null>(null);
  const [last, setLast] = useState(nodeId);
  if (last !== nodeId) {
    setLast(nodeId);
    setDraft(nodeId);
    setError(null);
  }
  const commit = () => {
    if (draft === nodeId) return;
    const problem = onRename(draft);
    setError(problem);
    if (problem) setDraft(nodeId);
  };
  return (
    <Field label="Node id" hint="Templates name this node by its id, e.g. {{id.field}}." error={error ?? undefined}>
      {(id) => (
        <Input
          id={id}
          className="font-mono"
          value={draft}
          data-testid="node-id-input"
          onChange={(e) => setDraft(e.target.value)}
          onBlur={commit}
          onKeyDown={(e) => e.key === "Enter" && commit()}
        />
      )}
    </Field>
  );
}
