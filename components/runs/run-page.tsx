"use client";
import Link from "next/link";
import { useState } from "react";
import { useWorkflow } from "@/lib/client/hooks";
import { useRun } from "@/lib/client/use-run";
import { Card, CardHeader, ErrorAlert, PageHeader, PageSpinner, StatusBadge, buttonClass, cx, formatDuration, timeAgo } from "@/components/ui";
import { PageContainer } from "@/components/shell/app-shell";
import { NodeOutput } from "./node-output";
import { RunLogList, RunSummaryCard } from "./run-details";
import { RecipientsTable } from "./recipients-table";
import { SendProgress } from "./send-progress";
import { RunActions, RunOrigin } from "./run-actions";

export function RunPage({ runId }: { runId: string }) {
  const { run, error } = useRun(runId);
  const workflow = useWorkflow(run?.workflowId ?? null);
  const [picked, setPicked] = useState<string | null>(null);
  if (!run) return error ? <PageContainer><ErrorAlert error={new Error(error)} /></PageContainer> : <PageSpinner label="Loading run…" />;
  const nodeIds = Object.keys(run.nodes ?? {});
  const current = picked ?? nodeIds.find((id) => run.nodes[id].status === "FAILED") ?? nodeIds.at(-1) ?? null;
  return (
    <PageContainer wide>
      <PageHeader
        title={workflow.data ? `Run of “${workflow.data.name}”` : "Run"}
        description={
          <span className="flex flex-wrap items-center gap-2">
            <span className="font-mono text-xs">{run.runId} · workflow version {run.workflowVersion} · queued {timeAgo(run.enqueuedAt)}</span>
            <RunOrigin run={run} />
            {run.retryOf && (
              <Link href={`/runs/${run.retryOf}`} className="text-xs text-brand-700 hover:underline" data-testid="run-retry-of">
                retry of {run.retryOf}
              </Link>
            )}
          </span>
        }
        actions={
          <span className="flex items-center gap-2">
          <RunActions run={run} size="md" />
          <Link href={`/workflows/${run.workflowId}?run=${run.runId}`} className={buttonClass("secondary")} data-testid="open-in-editor">
            Open in editor
          </Link>
          </span>
        }
      />
      <div className="grid grid-cols-1 gap-6 lg:grid-cols-[22rem_minmax(0,1fr)]">
        <div className="space-y-6">
          <Card className="p-5">
            <RunSummaryCard run={run} />
          </Card>
          <Card>
            <CardHeader title="Nodes" />
            <ul className="divide-y divide-slate-100" data-testid="run-nodes">
              {nodeIds.map((id) => {
                const n = run.nodes[id];
                return (
                  <li key={id}>
                    <button onClick={() => setPicked(id)} className={cx("flex w-full items-center justify-between px-5 py-2.5 text-left", id === current ? "bg-brand-50" : "hover:bg-slate-50")} data-testid={`run-node-${id}`}>
                      <span className="min-w-0">
                        <span className="font-mono text-sm text-slate-900">{id}</span>
                        <span className="ml-2 text-xs text-slate-400">{n.type}</span>
                        {/* Below the name, so a running node's bar and count never squeeze it. */}
                        {n.progress && n.status === "RUNNING" && (
                          <span className="mt-0.5 block text-xs text-slate-500">
                            <SendProgress nodeId={id} result={n} />
                          </span>
                        )}
                      </span>
                      <span className="flex shrink-0 items-center gap-2 text-xs text-slate-500">
                        {formatDuration(n.startedAt, n.completedAt)}
                        <StatusBadge status={n.status} />
                      </span>
                    </button>
                  </li>
                );
              })}
            </ul>
          </Card>
        </div>
        <div className="space-y-6">
          {current && run.nodes[current] && (
            <Card>
              <CardHeader title={<span className="font-mono">{current}</span>} description={run.nodes[current].error ?? `${run.nodes[current].type} · ${run.nodes[current].status.toLowerCase()}`} />
              <div className="p-5">
                <NodeOutput key={current} runId={run.runId} nodeId={current} result={run.nodes[current]} />
              </div>
            </Card>
          )}
          {current && run.nodes[current]?.type === "OUTPUT" && (
            <Card>
              <CardHeader title="Recipients" description="Every email of this node and what happened to it" />
              <div className="p-5">
                <RecipientsTable key={current} runId={run.runId} nodeId={current} live={run.status === "PENDING" || run.status === "RUNNING"} />
              </div>
            </Card>
          )}
          <Card>
            <CardHeader title="Log" />
            <div className="p-5">
              <RunLogList logs={run.logs ?? []} onPickNode={setPicked} />
            </div>
          </Card>
        </div>
      </div>
    </PageContainer>
  );
}
