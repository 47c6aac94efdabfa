"use client";
import Link from "next/link";
import { useInfiniteQuery } from "@tanstack/react-query";
import { useState } from "react";
import { api, qs } from "@/lib/client/api";
import type { AccountRunItem, Page, RunStatus } from "@/lib/client/types";
import { Button, Card, EmptyState, ErrorAlert, PageHeader, PageSpinner, Select, StatusBadge, formatDuration, timeAgo } from "@/components/ui";
import { PageContainer } from "@/components/shell/app-shell";
import { RunActions, RunOrigin } from "./run-actions";

const STATUSES: ("" | RunStatus)[] = ["", "PENDING", "RUNNING", "SUCCESS", "FAILED"];

/**
 * Every run of the account across workflows (GET /api/runs), newest first: workflow, status, trigger, queue position
 * of waiting runs, Retry/Cancel where they apply. Refreshes every 3 s while a listed run is unfinished.
 */
export function RunsListPage() {
  const [status, setStatus] = useState<"" | RunStatus>("");
  const query = useInfiniteQuery({
    queryKey: ["runs", "all", status],
    queryFn: ({ pageParam }) => api.get<Page<AccountRunItem>>(`/api/runs${qs({ status, limit: 25, cursor: pageParam })}`),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
    refetchInterval: (q) =>
      q.state.data?.pages.some((p) => p.items.some((r) => r.status === "PENDING" || r.status === "RUNNING")) ? 3000 : false,
  });
  const runs = query.data?.pages.flatMap((p) => p.items) ?? [];
  const refresh = () => void query.refetch();
  return (
    <PageContainer wide>
      <PageHeader
        title="Runs"
        description="Every run of every workflow, newest first."
        actions={
          <Select value={status} onChange={(e) => setStatus(e.target.value as "" | RunStatus)} aria-label="Status" data-testid="runs-status-filter">
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s === "" ? "All statuses" : s.toLowerCase()}
              </option>
            ))}
          </Select>
        }
      />
      {query.error && <ErrorAlert error={query.error} />}
      {query.isPending ? (
        <PageSpinner label="Loading runs…" />
      ) : runs.length === 0 ? (
        <EmptyState title="No runs yet" description="Runs appear here when a workflow runs: by hand, on its schedule or from an inbound hook." testId="runs-empty" />
      ) : (
        <Card className="overflow-x-auto">
          {/* On a phone: workflow, status and the actions; the origin and the figures fold away. */}
          <table className="w-full text-sm" data-testid="runs-table">
            <thead className="border-b border-slate-200 text-left text-xs text-slate-500">
              <tr>
                <th className="px-4 py-2 font-medium">Workflow</th>
                <th className="px-4 py-2 font-medium">Status</th>
                <th className="hidden px-4 py-2 font-medium sm:table-cell">Started by</th>
                <th className="hidden px-4 py-2 font-medium md:table-cell">Queued</th>
                <th className="hidden px-4 py-2 font-medium md:table-cell">Took</th>
                <th className="hidden px-4 py-2 font-medium md:table-cell">Emails</th>
                <th className="px-4 py-2" />
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {runs.map((run) => (
                <tr key={run.runId} data-testid="runs-row" data-run-id={run.runId}>
                  <td className="px-4 py-2">
                    <Link href={`/runs/${run.runId}`} className="font-medium text-slate-900 hover:text-brand-700">
                      {run.workflowName}
                    </Link>
                    <div className="break-all font-mono text-[11px] text-slate-400">{run.runId}</div>
                  </td>
                  <td className="px-4 py-2">
                    <StatusBadge status={run.status} />
                    {run.error && <div className="max-w-xs truncate text-xs text-red-700" title={run.error}>{run.error}</div>}
                  </td>
                  <td className="hidden px-4 py-2 sm:table-cell">
                    <RunOrigin run={run} />
                  </td>
                  <td className="hidden px-4 py-2 text-xs text-slate-600 md:table-cell">{timeAgo(run.enqueuedAt)}</td>
                  <td className="hidden px-4 py-2 text-xs text-slate-600 md:table-cell">{run.completedAt ? formatDuration(run.startedAt ?? run.enqueuedAt, run.completedAt) : "—"}</td>
                  <td className="hidden px-4 py-2 text-xs text-slate-600 md:table-cell">{run.result ? run.result.emailsSent : "—"}</td>
                  <td className="px-4 py-2 text-right">
                    <RunActions run={run} onCancelled={refresh} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {query.hasNextPage && (
            <div className="border-t border-slate-100 p-3 text-center">
              <Button variant="ghost" size="sm" loading={query.isFetchingNextPage} onClick={() => void query.fetchNextPage()} data-testid="runs-more">
                Load more
              </Button>
            </div>
          )}
        </Card>
      )}
    </PageContainer>
  );
}
