"use client";
// Notes drawn over the canvas: the stored version on show, the narrow-screen note, the empty canvas, graph problems.
import type { ValidationResult } from "@/lib/client/types";
import { Button, ErrorAlert } from "@/components/ui";

export function VersionBanner(props: {
  version: number;
  /** The version is shown because a run of it is open. */
  ofRun: boolean;
  loading: boolean;
  error: unknown;
  /** Offer "Restore this version" (not the saved one, and there is room to edit). */
  canRestore: boolean;
  restoring: boolean;
  onRestore: () => void;
  onBack: () => void;
}) {
  return (
    <div className="absolute left-1/2 top-3 z-10 flex max-w-[90%] -translate-x-1/2 flex-wrap items-center gap-2 rounded-lg bg-white px-4 py-2 text-sm shadow-md ring-1 ring-brand-200" data-testid="version-banner" data-version={props.version}>
      <span className="font-medium text-slate-800">
        Version {props.version}
        {props.ofRun ? " — the graph this run ran" : ""} · read-only
      </span>
      {props.loading && <span className="text-slate-500">Loading…</span>}
      <ErrorAlert error={props.error} />
      {props.canRestore && (
        <Button size="sm" variant="secondary" onClick={props.onRestore} loading={props.restoring} data-testid="banner-restore">
          Restore this version
        </Button>
      )}
      <Button size="sm" variant="ghost" onClick={props.onBack} data-testid="back-to-editing">
        Back to editing
      </Button>
    </div>
  );
}

export function NarrowNote() {
  return (
    <p className="absolute left-1/2 top-3 z-10 -translate-x-1/2 rounded-lg bg-white px-3 py-1.5 text-center text-xs text-slate-600 shadow ring-1 ring-slate-200" data-testid="narrow-note">
      Editing needs a wider screen (768 px or more). You can look and run here.
    </p>
  );
}

export function EmptyCanvasNote() {
  return (
    <div className="pointer-events-none absolute inset-0 z-10 flex items-center justify-center" data-testid="canvas-empty">
      <div className="max-w-sm rounded-xl bg-white/90 px-6 py-5 text-center shadow-sm ring-1 ring-slate-200">
        <p className="font-semibold text-slate-900">Start with a trigger</p>
        <p className="mt-1 text-sm text-slate-500">
          Drag TRIGGER from the palette onto the canvas, then a DATA_SOURCE, a FILTER or AI step, and an OUTPUT. Connect them top to bottom.
        </p>
      </div>
    </div>
  );
}

/** Problems of the whole graph (not of one node): the first four. */
export function GraphIssues({ issues }: { issues: ValidationResult["errors"] }) {
  return (
    <div className="absolute bottom-3 left-1/2 z-10 max-w-lg -translate-x-1/2 rounded-lg bg-white px-4 py-2 text-sm shadow-md ring-1 ring-red-200" data-testid="graph-issues">
      <p className="font-medium text-red-700">This graph cannot run yet</p>
      <ul className="mt-1 list-disc pl-5 text-red-700">
        {issues.slice(0, 4).map((i, n) => (
          <li key={n}>{i.message}</li>
        ))}
      </ul>
    </div>
  );
}
