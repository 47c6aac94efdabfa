"use client";
import type { NodeType } from "@/lib/client/types";
import { nodeDefinitions } from "@/lib/nodes/definitions";
import { cx } from "@/components/ui";

export const DRAG_MIME = "application/x-flowmail-node";

/** Node types (their definitions, in order) to drag onto the canvas; Enter or a click adds one in the middle of the view (keyboard use). */
export function Palette({ onAdd }: { onAdd: (type: NodeType) => void }) {
  return (
    <aside className="flex w-32 shrink-0 flex-col gap-2 overflow-y-auto border-r border-slate-200 bg-white p-2 lg:w-56 lg:p-3" aria-label="Node palette" data-testid="palette">
      <p className="px-1 text-xs font-semibold uppercase tracking-wide text-slate-400">Nodes</p>
      {nodeDefinitions.map(({ type, accent, description }) => (
        <button
          key={type}
          type="button"
          draggable
          data-testid={`palette-${type}`}
          onDragStart={(e) => {
            e.dataTransfer.setData(DRAG_MIME, type);
            e.dataTransfer.effectAllowed = "move";
          }}
          onClick={() => onAdd(type)}
          className="cursor-grab rounded-lg bg-white px-3 py-2.5 text-left ring-1 ring-slate-200 transition hover:shadow-sm hover:ring-brand-300 focus-visible:outline-2 focus-visible:outline-brand-600 active:cursor-grabbing"
        >
          <span className={cx("rounded px-1.5 py-0.5 text-[10px] font-semibold tracking-wide", accent)}>{type}</span>
          <p className="mt-1 hidden text-xs text-slate-500 lg:block">{description}</p>
        </button>
      ))}
      <p className="mt-auto hidden px-1 text-[11px] leading-relaxed text-slate-400 lg:block">
        Drag a node onto the canvas, then drag from a node&apos;s bottom handle to another&apos;s top handle to connect them.
      </p>
    </aside>
  );
}
