"use client";
// Config panel fields a generic control cannot draw: the upload/Drive picker, the AI output list and the trigger's
// settings. A definition names them by kind (lib/nodes/node-definition.ts, CUSTOM_FIELD_KINDS).
import dynamic from "next/dynamic";
import Link from "next/link";
import { useState, type ComponentType } from "react";
import { useDriveFiles, useGoogleStatus, useUploads } from "@/lib/client/hooks";
import { AI_OUTPUT_TYPES, type AiOutputField } from "@/lib/client/types";
import type { CustomFieldKind } from "@/lib/nodes/node-definition";
import { Button, Field, Input, Select, cx, formatCount } from "@/components/ui";
import { issueFor, patch, type Config, type Issue } from "./form-fields";
import { SenderPicker } from "./sender-picker";

// Loaded when a TRIGGER is selected: its cron parsing and wording (croner, cronstrue) would otherwise weigh on
// every editor load (the editor's JavaScript is kept small).
const TriggerPanel = dynamic(() => import("./trigger-panel").then((m) => m.TriggerPanel), {
  loading: () => <p className="text-sm text-slate-500">Loading the trigger settings…</p>,
});

export interface CustomFieldProps {
  nodeId: string;
  config: Config;
  issues: Issue[];
  onChange: (config: Config) => void;
}

/** One component per custom kind: the compiler flags a kind without one. */
export const CUSTOM_FIELDS: Record<CustomFieldKind, ComponentType<CustomFieldProps>> = {
  "trigger-panel": ({ nodeId }) => <TriggerPanel nodeId={nodeId} />,
  "upload-picker": DataSourcePicker,
  "ai-outputs": AiOutputs,
  "sender-picker": SenderPicker,
};

/**
 * The choice each DATA_SOURCE had in the mode it left (its data holds either an uploadId or a driveFileId, never
 * both): switching to Google Drive and back brings the chosen CSV back, also after the node was deselected.
 */
const otherModeChoice = new Map<string, { uploadId?: string; driveFileId?: string }>();

function DataSourcePicker({ nodeId, config, onChange, issues }: CustomFieldProps) {
  const [mode, setMode] = useState<"upload" | "drive">(config.driveFileId !== undefined ? "drive" : "upload");
  const uploads = useUploads();
  const switchTo = (next: "upload" | "drive") => {
    if (next === mode) return;
    const kept = { ...otherModeChoice.get(nodeId) };
    if (typeof config.uploadId === "string" && config.uploadId) kept.uploadId = config.uploadId;
    if (typeof config.driveFileId === "string" && config.driveFileId) kept.driveFileId = config.driveFileId;
    otherModeChoice.set(nodeId, kept);
    setMode(next);
    onChange(next === "upload" ? { uploadId: kept.uploadId ?? "" } : { driveFileId: kept.driveFileId ?? "" });
  };
  return (
    <div className="space-y-4">
      <div className="grid grid-cols-2 rounded-lg bg-slate-100 p-1 text-sm" role="tablist">
        {(["upload", "drive"] as const).map((m) => (
          <button
            key={m}
            role="tab"
            aria-selected={mode === m}
            data-testid={`source-mode-${m}`}
            onClick={() => switchTo(m)}
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

function AiOutputs({ config, onChange, issues }: CustomFieldProps) {
  const outputs = (Array.isArray(config.output) ? config.output : []) as AiOutputField[];
  const setOutputs = (next: AiOutputField[]) => onChange({ ...config, output: next });
  const update = (i: number, change: (field: AiOutputField) => AiOutputField) => setOutputs(outputs.map((x, j) => (j === i ? change(x) : x)));
  return (
    <div className="space-y-2">
      <p className="text-sm font-medium text-slate-700">Declared outputs</p>
      {outputs.map((o, i) => (
        <div key={i} className="grid grid-cols-[1fr_6.5rem_auto] gap-2">
          <Input className="font-mono" value={o.name} placeholder="name" data-testid={`ai-output-name-${i}`} onChange={(e) => update(i, (x) => ({ ...x, name: e.target.value }))} />
          <Select value={o.type} data-testid={`ai-output-type-${i}`} onChange={(e) => update(i, (x) => ({ ...x, type: e.target.value as AiOutputField["type"] }))}>
            {AI_OUTPUT_TYPES.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </Select>
          <Button variant="ghost" size="sm" aria-label={`Remove output ${o.name}`} onClick={() => setOutputs(outputs.filter((_, j) => j !== i))}>
            ✕
          </Button>
          <Input className="col-span-3" value={o.description ?? ""} placeholder="Description (helps the model)" onChange={(e) => update(i, (x) => patch(x, "description", e.target.value) as AiOutputField)} />
        </div>
      ))}
      {issueFor(issues, "output") && <p className="text-xs font-medium text-red-600">{issueFor(issues, "output")}</p>}
      <Button variant="secondary" size="sm" onClick={() => setOutputs([...outputs, { name: `field_${outputs.length + 1}`, type: "string" }])} data-testid="ai-add-output">
        Add output
      </Button>
    </div>
  );
}
