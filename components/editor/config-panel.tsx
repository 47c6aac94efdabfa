"use client";
import Link from "next/link";
import { useMemo, useState } from "react";
import { AI_OUTPUT_TYPES, type AiOutputField, type Graph, type NodeType, type ValidationResult } from "@/lib/client/types";
import { useDriveFiles, useGoogleStatus, useUploads } from "@/lib/client/hooks";
import { Button, Field, Input, Select, Textarea, cx, formatCount, humanize } from "@/components/ui";
import { NODE_KINDS } from "./node-kinds";
import { TemplateField } from "./template-field";
import dynamic from "next/dynamic";
// Loaded when a TRIGGER is selected: its cron parsing and wording (croner, cronstrue) would otherwise weigh on
// every editor load (issue 17 keeps the editor's JavaScript ≤ 300 KB).
const TriggerPanel = dynamic(() => import("./trigger-panel").then((m) => m.TriggerPanel), {
  loading: () => <p className="text-sm text-slate-500">Loading the trigger settings…</p>,
});
import { ancestorsOf, templateSuggestions, upstreamColumns, type Suggestion } from "./suggestions";

type Config = Record<string, unknown>;
type Issue = ValidationResult["errors"][number];

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

/** Sets a key, or removes it when the value is empty, so optional fields are absent rather than "". */
function patch(config: Config, key: string, value: unknown): Config {
  const next = { ...config };
  if (value === "" || value === undefined) delete next[key];
  else next[key] = value;
  return next;
}

/** The server's message for one data field of this node (paths look like `graph.nodes[2].data.expr`). */
function issueFor(issues: Issue[], field: string): string | undefined {
  const message = issues.find((i) => new RegExp(`\\.data\\.${field}(\\b|\\.|\\[|$)`).test(i.path))?.message;
  return message === undefined ? undefined : humanize(message);
}

export function ConfigPanel(props: PanelProps) {
  const { nodeId, type, graph, columnsByUpload } = props;
  const suggestions = useMemo(() => templateSuggestions(graph, nodeId, columnsByUpload), [graph, nodeId, columnsByUpload]);
  const general = props.issues.filter((i) => !/\.data\./.test(i.path));
  return (
    <div className="space-y-5 p-4" data-testid="config-panel">
      <div className="flex items-start justify-between gap-2">
        <div>
          <span className={cx("rounded px-1.5 py-0.5 text-[10px] font-semibold tracking-wide", NODE_KINDS[type].accent)}>{type}</span>
          <p className="mt-1 text-xs text-slate-500">{NODE_KINDS[type].description}</p>
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
      {type === "TRIGGER" && <TriggerPanel nodeId={nodeId} />}
      {type === "DATA_SOURCE" && <DataSourceConfig {...props} />}
      {type === "AI" && <AiConfig {...props} suggestions={suggestions} />}
      {type === "FILTER" && <FilterConfig {...props} suggestions={suggestions} />}
      {type === "OUTPUT" && <OutputConfig {...props} suggestions={suggestions} />}
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

function DataSourceConfig({ config, onChange, issues }: PanelProps) {
  const [mode, setMode] = useState<"upload" | "drive">(config.driveFileId !== undefined ? "drive" : "upload");
  const uploads = useUploads();
  return (
    <div className="space-y-4">
      <div className="grid grid-cols-2 rounded-lg bg-slate-100 p-1 text-sm" role="tablist">
        {(["upload", "drive"] as const).map((m) => (
          <button
            key={m}
            role="tab"
            aria-selected={mode === m}
            data-testid={`source-mode-${m}`}
            onClick={() => {
              setMode(m);
              onChange(m === "upload" ? { uploadId: "" } : { driveFileId: "" });
            }}
            className={cx("rounded-md py-1.5 font-medium", mode === m ? "bg-white shadow-sm text-slate-900" : "text-slate-500")}
          >
            {m === "upload" ? "CSV upload" : "Google Drive"}
          </button>
        ))}
      </div>
      {mode === "upload" ? (
        <Field label="Upload" error={issueFor(issues, "uploadId")} hint={<Link href="/uploads" className="text-brand-600">Upload a new CSV →</Link>}>
          {(id) => (
            <Select id={id} value={String(config.uploadId ?? "")} onChange={(e) => onChange({ uploadId: e.target.value })} data-testid="upload-select">
              <option value="">Choose an upload…</option>
              {(uploads.data?.items ?? []).map((u) => (
                <option key={u.uploadId} value={u.uploadId}>
                  {u.filename} ({formatCount(u.rowCount)} {u.rowCount === 1 ? "row" : "rows"})
                </option>
              ))}
            </Select>
          )}
        </Field>
      ) : (
        <DrivePicker value={String(config.driveFileId ?? "")} onPick={(driveFileId) => onChange({ driveFileId })} />
      )}
    </div>
  );
}

function DrivePicker({ value, onPick }: { value: string; onPick: (id: string) => void }) {
  const status = useGoogleStatus();
  const [q, setQ] = useState("");
  const files = useDriveFiles(q, !!status.data?.connected);
  if (status.isPending) return <p className="text-sm text-slate-500">Checking your Google link…</p>;
  if (!status.data?.connected)
    return (
      <p className="rounded-lg bg-slate-50 px-3 py-2 text-sm text-slate-600">
        Connect a Google account in <Link href="/settings" className="font-medium text-brand-600">Settings</Link> to read CSV files and Sheets from Drive.
      </p>
    );
  return (
    <div className="space-y-2">
      <Input placeholder="Search Drive…" value={q} onChange={(e) => setQ(e.target.value)} data-testid="drive-search" />
      <ul className="max-h-56 overflow-auto rounded-lg ring-1 ring-slate-200">
        {(files.data?.items ?? []).map((f) => (
          <li key={f.id}>
            <button onClick={() => onPick(f.id)} className={cx("w-full px-3 py-2 text-left text-sm", f.id === value ? "bg-brand-50 text-brand-800" : "hover:bg-slate-50")}>
              {f.name}
              <span className="block text-xs text-slate-400">{f.mimeType.includes("spreadsheet") ? "Google Sheet" : "CSV"}</span>
            </button>
          </li>
        ))}
        {files.data?.items.length === 0 && <li className="px-3 py-2 text-sm text-slate-500">No CSV files or Sheets match.</li>}
      </ul>
    </div>
  );
}

function AiConfig({ config, onChange, issues, suggestions }: PanelProps & { suggestions: Suggestion[] }) {
  const outputs = (Array.isArray(config.output) ? config.output : []) as AiOutputField[];
  const setOutputs = (next: AiOutputField[]) => onChange({ ...config, output: next });
  return (
    <div className="space-y-4">
      <Field label="Prompt" error={issueFor(issues, "prompt")} hint="Type {{ to insert fields of upstream nodes.">
        {(id) => <TemplateField id={id} multiline rows={5} value={String(config.prompt ?? "")} onChange={(v) => onChange({ ...config, prompt: v })} suggestions={suggestions} testId="ai-prompt" />}
      </Field>
      <div className="space-y-2">
        <p className="text-sm font-medium text-slate-700">Declared outputs</p>
        {outputs.map((o, i) => (
          <div key={i} className="grid grid-cols-[1fr_6.5rem_auto] gap-2">
            <Input className="font-mono" value={o.name} placeholder="name" data-testid={`ai-output-name-${i}`} onChange={(e) => setOutputs(outputs.map((x, j) => (j === i ? { ...x, name: e.target.value } : x)))} />
            <Select value={o.type} data-testid={`ai-output-type-${i}`} onChange={(e) => setOutputs(outputs.map((x, j) => (j === i ? { ...x, type: e.target.value as AiOutputField["type"] } : x)))}>
              {AI_OUTPUT_TYPES.map((t) => (
                <option key={t}>{t}</option>
              ))}
            </Select>
            <Button variant="ghost" size="sm" aria-label={`Remove output ${o.name}`} onClick={() => setOutputs(outputs.filter((_, j) => j !== i))}>
              ✕
            </Button>
            <Input className="col-span-3" value={o.description ?? ""} placeholder="Description (helps the model)" onChange={(e) => setOutputs(outputs.map((x, j) => (j === i ? (patch(x as unknown as Config, "description", e.target.value) as unknown as AiOutputField) : x)))} />
          </div>
        ))}
        {issueFor(issues, "output") && <p className="text-xs font-medium text-red-600">{issueFor(issues, "output")}</p>}
        <Button variant="secondary" size="sm" onClick={() => setOutputs([...outputs, { name: `field_${outputs.length + 1}`, type: "string" }])} data-testid="ai-add-output">
          Add output
        </Button>
      </div>
      <details className="rounded-lg bg-slate-50 px-3 py-2">
        <summary className="cursor-pointer text-sm font-medium text-slate-700">Model settings</summary>
        <div className="mt-3 space-y-3">
          <Field label="Model" hint="Empty: the model from your AI provider settings." error={issueFor(issues, "model")}>
            {(id) => <Input id={id} value={String(config.model ?? "")} onChange={(e) => onChange(patch(config, "model", e.target.value))} />}
          </Field>
          <Field label="System prompt" error={issueFor(issues, "system")}>
            {(id) => <Textarea id={id} rows={2} value={String(config.system ?? "")} onChange={(e) => onChange(patch(config, "system", e.target.value))} />}
          </Field>
          <Field label="Temperature" error={issueFor(issues, "temperature")}>
            {(id) => (
              <Input id={id} type="number" min={0} max={2} step={0.1} value={config.temperature === undefined ? "" : String(config.temperature)} onChange={(e) => onChange(patch(config, "temperature", e.target.value === "" ? "" : Number(e.target.value)))} />
            )}
          </Field>
        </div>
      </details>
    </div>
  );
}

function FilterConfig({ config, onChange, issues, suggestions, graph, nodeId, columnsByUpload }: PanelProps & { suggestions: Suggestion[] }) {
  const columns = useMemo(() => {
    const ancestors = new Set(ancestorsOf(graph, nodeId));
    return upstreamColumns(graph.nodes.filter((n) => ancestors.has(n.id)), columnsByUpload);
  }, [graph, nodeId, columnsByUpload]);
  return (
    <div className="space-y-4">
      <Field label="Source" error={issueFor(issues, "source")} hint="An array from upstream, e.g. {{source_1.rows}}.">
        {(id) => <TemplateField id={id} value={String(config.source ?? "")} onChange={(v) => onChange({ ...config, source: v })} suggestions={suggestions.filter((s) => !s.ref.startsWith("item."))} testId="filter-source" placeholder="{{source_1.rows}}" />}
      </Field>
      <Field
        label="Keep items where"
        error={issueFor(issues, "expr")}
        hint={columns.length ? <>Fields: {columns.map((c) => <code key={c} className="mr-1 rounded bg-slate-100 px-1 font-mono">{c}</code>)}</> : "e.g. rating >= 4 && contains(lower(email), \"@example.com\")"}
      >
        {(id) => <Input id={id} className="font-mono" value={String(config.expr ?? "")} onChange={(e) => onChange({ ...config, expr: e.target.value })} data-testid="filter-expr" placeholder="rating >= 4" />}
      </Field>
    </div>
  );
}

function OutputConfig({ config, onChange, issues, suggestions }: PanelProps & { suggestions: Suggestion[] }) {
  const text = (key: string) => String(config[key] ?? "");
  const set = (key: string) => (value: string) => onChange({ ...config, [key]: value });
  const nodeRefs = suggestions.filter((s) => !s.ref.startsWith("item."));
  return (
    <div className="space-y-4">
      <Field label="For each" error={issueFor(issues, "forEach")} hint="One email per element of this array.">
        {(id) => <TemplateField id={id} value={text("forEach")} onChange={set("forEach")} suggestions={nodeRefs} testId="output-foreach" placeholder="{{filter_1.items}}" />}
      </Field>
      <Field label="To" error={issueFor(issues, "to")}>
        {(id) => <TemplateField id={id} value={text("to")} onChange={set("to")} suggestions={suggestions} testId="output-to" placeholder="{{item.email}}" />}
      </Field>
      <Field label="Subject" error={issueFor(issues, "subject")}>
        {(id) => <TemplateField id={id} value={text("subject")} onChange={set("subject")} suggestions={suggestions} testId="output-subject" />}
      </Field>
      <Field label="Body" error={issueFor(issues, "body")}>
        {(id) => <TemplateField id={id} multiline rows={6} value={text("body")} onChange={set("body")} suggestions={suggestions} testId="output-body" />}
      </Field>
      <Field label="Format" error={issueFor(issues, "format")}>
        {(id) => (
          <Select id={id} value={text("format") || "text"} onChange={(e) => onChange({ ...config, format: e.target.value })} data-testid="output-format">
            <option value="text">Plain text</option>
            <option value="html">HTML (values are escaped)</option>
          </Select>
        )}
      </Field>
    </div>
  );
}

export function EdgePanel({ label, condition, suggestions, onChange, onDelete, issues }: {
  label: string;
  condition: string;
  suggestions: Suggestion[];
  onChange: (condition: string) => void;
  onDelete: () => void;
  issues?: string[];
}) {
  return (
    <div className="space-y-4 p-4" data-testid="edge-panel">
      <div className="flex items-start justify-between">
        <div>
          <p className="text-sm font-semibold text-slate-900">Edge</p>
          <p className="font-mono text-xs text-slate-500">{label}</p>
        </div>
        <Button variant="danger" size="sm" onClick={onDelete} data-testid="delete-edge">
          Delete
        </Button>
      </div>
      <Field label="Condition" error={issues?.length ? issues.join(" · ") : undefined} hint="Empty: always followed. Otherwise followed only when true, e.g. ai_1.score > 5 — add the negated condition on another edge for an else branch.">
        {(id) => (
          <>
            <Input id={id} className="font-mono" value={condition} onChange={(e) => onChange(e.target.value)} data-testid="edge-condition" list={`${id}-refs`} autoComplete="off" />
            {/* The datalist's id must be the one the input names, or the browser offers nothing. */}
            <datalist id={`${id}-refs`} data-testid="edge-condition-suggestions">
              {suggestions.map((s) => (
                <option key={s.ref} value={s.ref} />
              ))}
            </datalist>
          </>
        )}
      </Field>
    </div>
  );
}
