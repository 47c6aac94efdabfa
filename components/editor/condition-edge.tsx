"use client";
import { BaseEdge, EdgeLabelRenderer, getBezierPath, useStoreApi, type EdgeProps } from "@xyflow/react";
import { memo } from "react";
import { cx, formatCount } from "@/components/ui";
import type { FlowEdge } from "./mapper";

/** Display-only extras: how many items crossed this edge in the shown run. */
export interface EdgeOverlay {
  count?: number | null;
  dead?: boolean;
  /** The edge has a validation error (its condition): drawn red, explained in the edge panel. */
  invalid?: boolean;
}

function ConditionEdgeView(props: EdgeProps<FlowEdge>) {
  const { id, sourceX, sourceY, targetX, targetY, sourcePosition, targetPosition, data, selected, markerEnd } = props;
  const [path, labelX, labelY] = getBezierPath({ sourceX, sourceY, targetX, targetY, sourcePosition, targetPosition });
  const overlay = (data ?? {}) as FlowEdge["data"] & EdgeOverlay;
  const condition = overlay?.condition;
  const invalid = !!overlay.invalid;
  const hasCount = typeof overlay.count === "number";
  const store = useStoreApi();
  return (
    <>
      <BaseEdge
        id={id}
        path={path}
        markerEnd={markerEnd}
        style={{ ...(overlay.dead ? { strokeDasharray: "4 4", opacity: 0.5 } : {}), ...(overlay.invalid ? { stroke: "#dc2626", strokeWidth: 2 } : {}) }}
      />
      {(condition || hasCount) && (
        <EdgeLabelRenderer>
          <div
            className="nodrag nopan pointer-events-auto absolute flex cursor-pointer items-center gap-1"
            // The label sits on the middle of the edge, where people click to select it: make that select it.
            onClick={() => store.getState().addSelectedEdges([id])}
            style={{ transform: `translate(-50%, -50%) translate(${labelX}px, ${labelY}px)` }}
          >
            {condition && (
              <span
                data-testid={`edge-label-${id}`}
                data-invalid={invalid || undefined}
                title={invalid ? "This condition has a problem: select the edge to see it" : undefined}
                className={cx(
                  "max-w-48 truncate rounded-md bg-white px-2 py-0.5 font-mono text-[11px] shadow-sm ring-1",
                  invalid ? "text-red-700 ring-red-500" : "text-amber-800",
                  selected ? "ring-brand-500" : invalid ? "" : "ring-amber-300",
                )}
              >
                if {condition}
              </span>
            )}
            {hasCount && (
              <span data-testid={`edge-count-${id}`} className="rounded-full bg-slate-700 px-2 py-0.5 text-[11px] font-medium text-slate-50">
                {formatCount(overlay.count!)} {overlay.count === 1 ? "item" : "items"}
              </span>
            )}
          </div>
        </EdgeLabelRenderer>
      )}
    </>
  );
}

export const ConditionEdge = memo(ConditionEdgeView);
