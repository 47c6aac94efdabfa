"use client";
// A running node's progress, for the run view and the canvas: an OUTPUT's `{ sent, total }`, an AI node with forEach's
// `{ done, total }` (items asked: answered or failed for good).
import type { NodeResult } from "@/lib/client/types";
import { formatCount } from "@/components/ui";

export function SendProgress({ nodeId, result }: { nodeId: string; result?: NodeResult | null }) {
  const progress = result?.progress;
  if (!progress || result?.status !== "RUNNING") return null;
  const ai = "done" in progress;
  const count = ai ? progress.done : progress.sent;
  const percent = progress.total > 0 ? Math.round((count / progress.total) * 100) : 0;
  return (
    <span
      className="inline-flex items-center gap-1.5"
      data-testid={`${ai ? "ai" : "send"}-progress-${nodeId}`}
      {...(ai ? { "data-done": count } : { "data-sent": count })}
      data-total={progress.total}
    >
      <span className="h-1.5 w-16 overflow-hidden rounded-full bg-slate-200" aria-hidden>
        <span className="block h-full bg-brand-500 transition-all" style={{ width: `${percent}%` }} />
      </span>
      <span className="tabular-nums">
        {formatCount(count)} / {formatCount(progress.total)} {ai ? "asked" : "sent"}
      </span>
    </span>
  );
}
