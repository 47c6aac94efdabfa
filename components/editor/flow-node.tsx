"use client";
import { Handle, Position, type NodeProps } from "@xyflow/react";
import { createContext, memo, useContext } from "react";
import type { NodeResult } from "@/lib/client/types";
import { cx } from "@/components/ui";
import type { FlowNode } from "./mapper";
import { NODE_KINDS, summarize } from "./node-kinds";

/** Extra, derived fields the canvas adds to a node for display only (never saved). */
export interface NodeOverlay {
  errors?: string[];
  run?: NodeResult;
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
  const kind = NODE_KINDS[data.type];
  const status = overlay.run?.status;
  const errors = overlay.errors ?? NO_ERRORS;
  const uploadNames = useContext(UploadNamesContext);
  return (
    <div
      data-testid={`node-${id}`}
      data-node-type={data.type}
      data-status={status ?? "idle"}
      data-invalid={errors.length > 0 || undefined}
      className={cx(
        "w-60 rounded-xl bg-white px-3.5 py-3 shadow-sm ring-1 transition-shadow",
        status ? STATUS_RING[status] : errors.length ? "ring-2 ring-red-400" : "ring-slate-200",
        selected && "shadow-md ring-2 ring-brand-500",
      )}
    >
      {kind.hasInput && <Handle type="target" position={Position.Top} data-testid={`handle-in-${id}`} />}
      <div className="flex items-center justify-between gap-2">
        <span className={cx("rounded px-1.5 py-0.5 text-[10px] font-semibold tracking-wide", kind.accent)}>{data.type}</span>
        {status && <StatusDot status={status} testId={`node-status-${id}`} />}
      </div>
      <p className="mt-1.5 truncate font-mono text-sm font-semibold text-slate-900">{id}</p>
      <p className="truncate text-xs text-slate-500">{summarize(data.type, data.config, uploadNames)}</p>
      {overlay.run?.status === "FAILED" && overlay.run.error && (
        <p className="mt-2 rounded bg-red-100 px-2 py-1 text-xs text-red-800" data-testid={`node-run-error-${id}`}>
          {overlay.run.error}
        </p>
      )}
      {errors.length > 0 && !status && (
        // Kept to two one-line items so an invalid node stays about the size of a valid one; the inspector
        // lists every message in full.
        <ul className="mt-2 space-y-0.5 rounded bg-red-50 px-2 py-1 text-[11px] leading-4 text-red-700" data-testid={`node-errors-${id}`}>
          {errors.slice(0, 2).map((e, i) => (
            <li key={i} className="truncate" title={e}>
              {e}
            </li>
          ))}
          {errors.length > 2 && <li className="text-red-500">+{errors.length - 2} more</li>}
        </ul>
      )}
      <Handle type="source" position={Position.Bottom} data-testid={`handle-out-${id}`} />
    </div>
  );
}

function StatusDot({ status, testId }: { status: string; testId: string }) {
  const tone: Record<string, string> = {
    PENDING: "bg-slate-100 text-slate-600",
    RUNNING: "bg-brand-100 text-brand-700",
    SUCCESS: "bg-emerald-100 text-emerald-700",
    FAILED: "bg-red-100 text-red-700",
    SKIPPED: "bg-amber-100 text-amber-800",
  };
  return (
    <span data-testid={testId} data-status={status} className={cx("rounded-full px-2 py-0.5 text-[10px] font-semibold", tone[status])}>
      {status === "RUNNING" ? "RUNNING…" : status}
    </span>
  );
}

// Memoized: React Flow re-renders only the nodes whose props changed, which keeps 200 nodes smooth.
export const FlowNodeComponent = memo(FlowNodeView);
