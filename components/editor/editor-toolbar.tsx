"use client";
// The editor's top bar: back link, name, saved/validation state, and the undo/redo/layout/save/preview/run buttons.
import Link from "next/link";
import { Badge, Button, Input, cx } from "@/components/ui";
import type { useValidation } from "./use-validation";

export function Toolbar(props: {
  name: string;
  onName: (name: string) => void;
  dirty: boolean;
  saving: boolean;
  running: boolean;
  validation: ReturnType<typeof useValidation>;
  canUndo: boolean;
  canRedo: boolean;
  onUndo: () => void;
  onRedo: () => void;
  onLayout: () => void;
  onSave: () => void;
  onRun: () => void;
  /** The "Preview" button (components/editor/preview-dialog.tsx), shown just before "Run". */
  preview?: React.ReactNode;
  /** A stored version or a narrow screen: nothing on the canvas can change, so the editing buttons rest. */
  readOnly?: boolean;
  isNew?: boolean;
}) {
  const { validation } = props;
  const problems = validation.result?.errors.length ?? 0;
  return (
    <div className="flex min-w-0 flex-wrap items-center gap-x-3 gap-y-2 border-b border-slate-200 bg-white px-3 py-2 md:px-4">
      <Link href="/workflows" className="text-sm text-slate-500 hover:text-slate-900" aria-label="Back to workflows">
        ←
      </Link>
      <Input value={props.name} onChange={(e) => props.onName(e.target.value)} className="!w-36 font-medium sm:!w-40 lg:!w-72" aria-label="Workflow name" data-testid="workflow-name" />
      {props.dirty ? (
        <Badge tone="amber" data-testid="unsaved">Unsaved</Badge>
      ) : props.isNew ? (
        <Badge tone="grey" data-testid="new-workflow-badge">New</Badge>
      ) : (
        <Badge tone="green" data-testid="saved">Saved</Badge>
      )}
      {/* Problems show as soon as an edit makes them (they are found in the browser); "Ready to run" waits for the
          server's checks of uploads and columns. */}
      <span className="text-xs" data-testid="validation-status" data-valid={problems > 0 ? false : validation.pending || !validation.result ? "unknown" : validation.result.valid}>
        {validation.error ? (
          <span className="text-amber-700">Could not check the graph: {validation.error}</span>
        ) : problems > 0 ? (
          <span className="text-red-600">{problems} {problems === 1 ? "problem" : "problems"}</span>
        ) : validation.pending || !validation.result ? (
          <span className="text-slate-400">Checking…</span>
        ) : (
          <span className="text-emerald-700">✓ Ready to run</span>
        )}
      </span>
      {/* Below 768 px the editor is read-only: the editing buttons make way, so Preview and Run stay on screen. */}
      <div className="ml-auto flex flex-wrap items-center justify-end gap-1.5">
        <Button variant="ghost" size="sm" className="max-md:hidden" onClick={props.onUndo} disabled={!props.canUndo || props.readOnly} title="Undo (Ctrl+Z)" data-testid="undo">
          Undo
        </Button>
        <Button variant="ghost" size="sm" className="max-md:hidden" onClick={props.onRedo} disabled={!props.canRedo || props.readOnly} title="Redo (Ctrl+Shift+Z)" data-testid="redo">
          Redo
        </Button>
        <Button variant="ghost" size="sm" className="max-md:hidden" onClick={props.onLayout} disabled={props.readOnly} title="Arrange nodes automatically" data-testid="auto-layout">
          Tidy up
        </Button>
        <Button variant="secondary" size="sm" className="max-md:hidden" onClick={props.onSave} loading={props.saving} disabled={props.readOnly} title="Save (Ctrl+S)" data-testid="save">
          Save
        </Button>
        {props.preview}
        <Button size="sm" onClick={props.onRun} loading={props.running} className={cx(props.running && "opacity-80")} data-testid="run">
          {props.running ? "Running" : "Run"}
        </Button>
      </div>
    </div>
  );
}
