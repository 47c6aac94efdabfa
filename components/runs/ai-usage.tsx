"use client";
// What model calls used (a node's usage, the run's ai totals), as small figures: its own module, so the views that show
// only these do not load the items table (ai-items.tsx).
import { formatUsd, type AiUsage } from "@/lib/client/ai";
import { formatCount } from "@/components/ui";

/** Calls, tokens and cost, as small figures. */
export function AiUsageFigures({ usage, testId, label }: { usage: AiUsage; testId: string; label?: string }) {
  const figures = [
    { name: "Calls", value: formatCount(usage.calls), key: "calls" },
    { name: "Input tokens", value: formatCount(usage.inputTokens), key: "input" },
    { name: "Output tokens", value: formatCount(usage.outputTokens), key: "output" },
    { name: "Cost", value: formatUsd(usage.costUsd), key: "cost" },
  ];
  return (
    <div className="@container" data-testid={testId}>
      {label && <p className="mb-1.5 text-[11px] font-semibold uppercase tracking-wide text-slate-500">{label}</p>}
      <dl className="grid grid-cols-2 gap-2 @lg:grid-cols-4">
        {figures.map((f) => (
          <div key={f.key} className="min-w-0 rounded-lg bg-fuchsia-100/40 px-3 py-2 ring-1 ring-fuchsia-100">
            <dt className="text-[11px] text-slate-600">{f.name}</dt>
            <dd className="truncate text-base font-semibold tabular-nums text-slate-900" data-testid={`${testId}-${f.key}`} title={f.value}>
              {f.value}
            </dd>
          </div>
        ))}
      </dl>
      {usage.costUsd === null && usage.calls > 0 && (
        <p className="mt-1 text-xs text-slate-500">No price is known for this model: set prices in Settings → AI provider to see costs.</p>
      )}
    </div>
  );
}
