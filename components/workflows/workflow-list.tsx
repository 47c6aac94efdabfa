"use client";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { useQueryClient } from "@tanstack/react-query";
import { keys, useWorkflows } from "@/lib/client/hooks";
import { Button, Card, EmptyState, ErrorAlert, PageHeader, PageSpinner, StatusBadge, buttonClass, timeAgo } from "@/components/ui";
import { PageContainer } from "@/components/shell/app-shell";
import { createDemoWorkflow } from "./demo";
import { ImportButton, WorkflowActions } from "./workflow-actions";

export function WorkflowList() {
  const { data, isPending, error } = useWorkflows();
  const router = useRouter();
  const queryClient = useQueryClient();
  const [demoBusy, setDemoBusy] = useState(false);
  const [demoError, setDemoError] = useState<unknown>(null);

  async function tryDemo() {
    setDemoBusy(true);
    setDemoError(null);
    try {
      const workflow = await createDemoWorkflow();
      await queryClient.invalidateQueries({ queryKey: keys.workflows });
      await queryClient.invalidateQueries({ queryKey: keys.uploads });
      router.push(`/workflows/${workflow.id}`);
    } catch (e) {
      setDemoError(e);
      setDemoBusy(false);
    }
  }

  const demoButton = (
    <Button variant="secondary" onClick={() => void tryDemo()} loading={demoBusy} data-testid="try-demo">
      Try a demo
    </Button>
  );
  const items = data?.items ?? [];
  return (
    <PageContainer>
      <PageHeader
        title="Workflows"
        description="Each workflow reads rows, optionally asks an AI and filters them, then sends one email per item."
        actions={
          <>
            <ImportButton />
            {demoButton}
            <Link href="/workflows/new" className={buttonClass("primary")} data-testid="new-workflow">
              New workflow
            </Link>
          </>
        }
      />
      <ErrorAlert error={demoError} testId="demo-error" className="mb-4" />
      <ErrorAlert error={error} className="mb-4" />
      {isPending ? (
        <PageSpinner />
      ) : items.length === 0 && !error ? (
        <EmptyState
          testId="workflows-empty"
          title="No workflows yet"
          description="Create one from scratch — drag a trigger, a data source and an output onto the canvas — or let the demo build a working one for you."
          action={
            <>
              {demoButton}
              <Link href="/workflows/new" className={buttonClass("primary")}>
                New workflow
              </Link>
            </>
          }
        />
      ) : (
        <Card className="overflow-x-auto">
          {/* Version, nodes and "updated" fold away on a phone: the name, the last run and the actions stay. */}
          <table className="w-full divide-y divide-slate-100 text-sm" data-testid="workflow-table">
            <thead className="bg-slate-50 text-left text-xs font-medium uppercase tracking-wide text-slate-500">
              <tr>
                <th className="px-3 py-3 sm:px-5">Name</th>
                <th className="hidden px-5 py-3 sm:table-cell">Version</th>
                <th className="hidden px-5 py-3 sm:table-cell">Nodes</th>
                <th className="px-3 py-3 sm:px-5">Last run</th>
                <th className="hidden px-5 py-3 md:table-cell">Updated</th>
                <th className="px-5 py-3"><span className="sr-only">Actions</span></th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {items.map((wf) => (
                <tr key={wf.id} className="hover:bg-slate-50" data-testid="workflow-row">
                  <td className="break-words px-3 py-3 sm:px-5">
                    <Link href={`/workflows/${wf.id}`} className="font-medium text-slate-900 hover:text-brand-700" data-testid="workflow-link">
                      {wf.name}
                    </Link>
                  </td>
                  <td className="hidden px-5 py-3 text-slate-600 sm:table-cell">v{wf.version}</td>
                  <td className="hidden px-5 py-3 text-slate-600 sm:table-cell">{wf.nodeCount}</td>
                  <td className="px-3 py-3 sm:px-5">
                    {wf.lastRun ? (
                      <Link href={`/runs/${wf.lastRun.runId}`} className="inline-flex flex-wrap items-center gap-x-2 gap-y-1">
                        <StatusBadge status={wf.lastRun.status} />
                        <span className="text-slate-500">{timeAgo(wf.lastRun.enqueuedAt)}</span>
                      </Link>
                    ) : (
                      <span className="text-slate-400">Never run</span>
                    )}
                  </td>
                  <td className="hidden px-5 py-3 text-slate-500 md:table-cell">{timeAgo(wf.updatedAt)}</td>
                  <td className="px-3 py-2 text-right">
                    <WorkflowActions workflow={wf} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </Card>
      )}
    </PageContainer>
  );
}
