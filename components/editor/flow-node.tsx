"use client";
import { Handle, Position, type NodeProps } from "@xyflow/react";
import { createContext, memo, useContext, useState } from "react";
import type { NodeResult } from "@/lib/client/types";
import { cx } from "@/components/ui";
import type { FlowNode } from "./mapper";
import { nodeDefinition } from "@/lib/nodes/definitions";
import { summarize } from "./node-kinds";
import { SendProgress } from "@/components/runs/send-progress";

/** Extra, derived fields the canvas adds to a node for display only (never saved). */
export interface NodeOverlay {
  errors?: string[];
  run?: NodeResult;
  /** The graph changed since the shown run: its status is kept, dimmed, as history. */
  stale?: boolean;
}

/** Upload id → file name, so a DATA_SOURCE card shows "people.csv" rather than an id. */
export const UploadNamesContext = createContext<Map<string, string>>(new Map());

/** Node id → its overlay (see use-overlays.ts); a node without one shows neither errors nor a status. */
export const NodeOverlaysContext = createContext<ReadonlyMap<string, NodeOverlay>>(new Map());
const NO_OVERLAY: NodeOverlay = {};
const NO_ERRORS: string[] = [];

const STATUS_RING: Record<string, string> = {
  PENDING: "ring-slate-300 bg-slate-50",
  RUNNING: "ring-brand-400 node-running",
  SUCCESS: "ring-emerald-500 bg-emerald-50/60",
  FAILED: "ring-red-500 bg-red-50/60",
  SKIPPED: "opacity-50 ring-slate-200 border-dashed",
};

function FlowNodeView({ id, data, selected }: NodeProps<FlowNode>) {
  const overlay = useContext(NodeOverlaysContext).get(id) ?? NO_OVERLAY;
  const kind = nodeDefinition(data.type);
  const status = overlay.run?.status;
  const errors = overlay.errors ?? NO_ERRORS;
  const uploadNames = useContext(UploadNamesContext);
  // Validation outranks the run: a node that cannot run as it is now keeps its red ring whatever an earlier run
  // said, and a stale run's status is shown dimmed.
  const ring = errors.length ? "ring-2 ring-red-500" : status && !overlay.stale ? STATUS_RING[status] : "ring-slate-200";
  return (
    <div
      data-testid={`node-${id}`}
      data-node-type={data.type}
      data-status={status ?? "idle"}
      data-stale={overlay.stale || undefined}
      data-invalid={errors.length > 0 || undefined}
      className={cx(
        "w-60 rounded-xl bg-white px-3.5 py-3 shadow-sm ring-1 transition-shadow",
        ring,
        selected && "shadow-md ring-2 ring-brand-500",
      )}
    >
      {kind.hasInput && <Handle type="target" position={Position.Top} data-testid={`handle-in-${id}`} />}
      <div className="flex items-center justify-between gap-2">
        <span className={cx("rounded px-1.5 py-0.5 text-[10px] font-semibold tracking-wide", kind.accent)}>{data.type}</span>
        {status && <StatusDot status={status} testId={`node-status-${id}`} dimmed={overlay.stale} />}
      </div>
      <p className="mt-1.5 truncate font-mono text-sm font-semibold text-slate-900">{id}</p>
      <p className="truncate text-xs text-slate-500">{summarize(data.type, data.config, uploadNames)}</p>
      {data.type === "OUTPUT" && (data.config as { unsubscribe?: boolean }).unsubscribe === false && (
        <span className="mt-1 inline-block rounded bg-slate-100 px-1.5 py-0.5 text-[10px] font-medium text-slate-600" data-testid={`node-transactional-${id}`} title="No unsubscribe link: for transactional mail only">
          transactional
        </span>
      )}
      {overlay.run?.progress && overlay.run.status === "RUNNING" && !overlay.stale && (
        <p className="mt-1 text-[11px] text-slate-600"><SendProgress nodeId={`canvas-${id}`} result={overlay.run} /></p>
      )}
      {overlay.run?.status === "FAILED" && overlay.run.error && !overlay.stale && <RunError id={id} text={overlay.run.error} />}
      {errors.length > 0 && (
        // One line whatever the count, so an invalid node stays the size of a valid one and never covers the handles
        // of its neighbours; the inspector lists every message in full.
        <p className="mt-2 flex gap-1 rounded bg-red-50 px-2 py-1 text-[11px] leading-4 text-red-700" data-testid={`node-errors-${id}`} title={errors.join("\n")}>
          <span className="min-w-0 flex-1 truncate">{errors[0]}</span>
          {errors.length > 1 && <span className="shrink-0 text-red-500">+{errors.length - 1} more</span>}
        </p>
      )}
      <Handle type="source" position={Position.Bottom} data-testid={`handle-out-${id}`} />
    </div>
  );
}

/** A run error capped to three lines (a stack of text would make the card tower over its neighbours). */
function RunError({ id, text }: { id: string; text: string }) {
  const [open, setOpen] = useState(false);
  const long = text.length > 120;
  return (
    <div className="mt-2 rounded bg-red-100 px-2 py-1 text-xs text-red-800" data-testid={`node-run-error-${id}`}>
      <p className={cx("break-words", !open && "line-clamp-3")}>{text}</p>
      {long && (
        <button
          type="button"
          className="nodrag mt-0.5 font-medium underline"
          data-testid={`node-run-error-toggle-${id}`}
          onClick={(e) => {
            e.stopPropagation();
            setOpen((o) => !o);
          }}
        >
          {open ? "Show less" : "Show more"}
        </button>
      )}
    </div>
  );
}

function StatusDot({ status, testId, dimmed }: { status: string; testId: string; dimmed?: boolean }) {
  const tone: Record<string, string> = {
    PENDING: "bg-slate-100 text-slate-600",
    RUNNING: "bg-brand-100 text-brand-700",
    SUCCESS: "bg-emerald-100 text-emerald-700",
    FAILED: "bg-red-100 text-red-700",
    SKIPPED: "bg-amber-100 text-amber-800",
  };
  return (
    <span
      data-testid={testId}
      data-status={status}
      title={dimmed ? "From the last run, before the graph changed" : undefined}
      className={cx("rounded-full px-2 py-0.5 text-[10px] font-semibold", tone[status], dimmed && "opacity-40")}
    >
      {status === "RUNNING" ? "RUNNING…" : status}
    </span>
  );
}

// Memoized: React Flow re-renders only the nodes whose props changed, which keeps 200 nodes smooth.
export const FlowNodeComponent = memo(FlowNodeView);
