"use client";
// A running OUTPUT node's `progress: { sent, total }`, for the run view and the canvas.
import type { NodeResult } from "@/lib/client/types";
import { formatCount } from "@/components/ui";

export function SendProgress({ nodeId, result }: { nodeId: string; result?: NodeResult | null }) {
  const progress = result?.progress;
  if (!progress || result?.status !== "RUNNING") return null;
  const percent = progress.total > 0 ? Math.round((progress.sent / progress.total) * 100) : 0;
  return (
    <span className="inline-flex items-center gap-1.5" data-testid={`send-progress-${nodeId}`} data-sent={progress.sent} data-total={progress.total}>
      <span className="h-1.5 w-16 overflow-hidden rounded-full bg-slate-200" aria-hidden>
        <span className="block h-full bg-brand-500 transition-all" style={{ width: `${percent}%` }} />
      </span>
      <span className="tabular-nums">
        {formatCount(progress.sent)} / {formatCount(progress.total)} sent
      </span>
    </span>
  );
}
