"use client";
import Link from "next/link";
import type { Run, RunLog, RunSummary } from "@/lib/client/types";
import { StatusBadge, cx, formatDuration, timeAgo } from "@/components/ui";
import dynamic from "next/dynamic";

// An estimate run's figures load with such a run, not with every page that shows a run's summary.
const AiEstimateView = dynamic(() => import("./ai-estimate").then((m) => m.AiEstimateView), { ssr: false });
import { AiUsageFigures } from "./ai-usage";

export function RunSummaryCard({ run }: { run: Run }) {
  const result = run.result;
  const stats = [
    { label: "Emails sent", value: result?.emailsSent, testId: "summary-emails-sent" },
    { label: "Filtered out", value: result?.filteredOut, testId: "summary-filtered-out" },
    { label: "Total rows", value: result?.totalRows, testId: "summary-total-rows" },
    ...(result?.emailsPlanned !== undefined ? [{ label: "Planned (preview)", value: result.emailsPlanned, testId: "summary-emails-planned" }] : []),
    ...(result?.suppressed ? [{ label: "Suppressed", value: result.suppressed, testId: "summary-suppressed" }] : []),
    ...(result?.duplicates ? [{ label: "Duplicates", value: result.duplicates, testId: "summary-duplicates" }] : []),
  ];
  return (
    <div className="space-y-3" data-testid="run-summary">
      <div className="flex items-center justify-between">
        <StatusBadge status={run.status} testId="run-status" />
        <span className="text-xs text-slate-500">
          {run.completedAt ? `took ${formatDuration(run.startedAt ?? run.enqueuedAt, run.completedAt)}` : `queued ${timeAgo(run.enqueuedAt)}`}
        </span>
      </div>
      {run.error && (
        <p className="rounded-lg bg-red-50 px-3 py-2 text-sm text-red-800 [overflow-wrap:anywhere]" data-testid="run-error">
          {run.error}
        </p>
      )}
      {result?.estimate ? (
        <AiEstimateView estimate={result.estimate} sampleUsage={result.ai} />
      ) : result && (
        <dl className="grid grid-cols-3 gap-2">
          {stats.map((s) => (
            <div key={s.label} className="rounded-lg bg-slate-50 px-3 py-2 ring-1 ring-slate-200">
              <dt className="text-[11px] text-slate-500">{s.label}</dt>
              <dd className="text-lg font-semibold text-slate-900" data-testid={s.testId}>
                {s.value ?? 0}
              </dd>
            </div>
          ))}
        </dl>
      )}
      {result?.ai && !result.estimate && (
        <AiUsageFigures
          usage={result.ai}
          testId="run-ai-totals"
          label={run.sendOf && result.ai.calls === 0 ? "AI: the preview's answers, not asked again" : "AI, all nodes"}
        />
      )}
    </div>
  );
}

const LEVEL: Record<string, string> = { error: "text-red-600", warn: "text-amber-700", info: "text-slate-600", debug: "text-slate-400" };

export function RunLogList({ logs, onPickNode }: { logs: RunLog[]; onPickNode?: (nodeId: string) => void }) {
  if (logs.length === 0) return <p className="text-sm text-slate-500">No log lines yet.</p>;
  return (
    <ol className="max-h-80 space-y-1 overflow-auto rounded-lg bg-slate-50 p-2 font-mono text-xs ring-1 ring-slate-200" data-testid="run-log">
      {logs.map((log, i) => (
        <li key={i} className="flex gap-2">
          <span className="shrink-0 text-slate-400">{new Date(log.at).toLocaleTimeString()}</span>
          {log.nodeId && (
            <button className="shrink-0 text-brand-700 hover:underline" onClick={() => onPickNode?.(log.nodeId!)}>
              {log.nodeId}
            </button>
          )}
          <span className={cx("min-w-0 [overflow-wrap:anywhere]", LEVEL[log.level] ?? "text-slate-700")}>{log.message}</span>
        </li>
      ))}
    </ol>
  );
}

export function RunHistory({ runs, activeRunId, onOpen }: { runs: RunSummary[]; activeRunId: string | null; onOpen: (runId: string) => void }) {
  if (runs.length === 0) return <p className="text-sm text-slate-500">No runs yet. Press Run to start one.</p>;
  return (
    <ul className="divide-y divide-slate-100 rounded-lg ring-1 ring-slate-200" data-testid="run-history">
      {runs.map((r) => (
        <li key={r.runId} className={cx("flex items-center justify-between gap-2 px-3 py-2", r.runId === activeRunId && "bg-brand-50")}>
          <button className="flex items-center gap-2 text-left" onClick={() => onOpen(r.runId)} data-testid="run-history-item">
            <StatusBadge status={r.status} />
            <span className="text-xs text-slate-600">{timeAgo(r.enqueuedAt)}</span>
            <span className="text-xs text-slate-400">v{r.workflowVersion}</span>
            {r.status === "PENDING" && r.queuePosition !== undefined && (
              <span className="text-xs text-slate-500" data-testid="run-history-queue-position">#{r.queuePosition} in queue</span>
            )}
            {r.trigger && <span className="rounded bg-slate-100 px-1 text-[10px] text-slate-600" data-testid="run-trigger">{r.trigger}</span>}
            {(r.mode === "preview" || r.mode === "estimate") && <span className="rounded bg-amber-50 px-1 text-[10px] text-amber-800">{r.mode}</span>}
          </button>
          <Link href={`/runs/${r.runId}`} className="text-xs font-medium text-brand-600 hover:text-brand-700">
            Details
          </Link>
        </li>
      ))}
    </ul>
  );
}
