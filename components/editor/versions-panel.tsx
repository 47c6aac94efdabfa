"use client";
// Workflow versions in the editor: every saved graph, newest first; view one read-only on the canvas, or restore it
// (a PATCH with its graph, which becomes the next version).
import { Badge, Button, ErrorAlert, cx, timeAgo } from "@/components/ui";
import { useWorkflowVersions } from "@/components/workflows/workflow-api";

export function VersionsPanel({ workflowId, currentVersion, viewing, onView, onRestore, restoring }: {
  workflowId: string | null;
  currentVersion: number;
  viewing: number | null;
  onView: (version: number | null) => void;
  onRestore: (version: number) => void;
  restoring: boolean;
}) {
  const versions = useWorkflowVersions(workflowId);
  if (!workflowId) return <p className="p-4 text-sm text-slate-500">Save the workflow to keep its versions.</p>;
  return (
    <div className="space-y-3 p-4" data-testid="versions-panel">
      <p className="text-xs text-slate-500">Each save that changes the graph is a new version. Runs name the version they ran.</p>
      <ErrorAlert error={versions.error} />
      {versions.isPending && <p className="text-sm text-slate-500">Loading versions…</p>}
      <ul className="space-y-1.5">
        {(versions.data?.items ?? []).map((v) => {
          const current = v.version === currentVersion;
          return (
            <li
              key={v.version}
              data-testid={`version-${v.version}`}
              className={cx("rounded-lg px-3 py-2 ring-1", viewing === v.version ? "bg-brand-50 ring-brand-300" : "ring-slate-200")}
            >
              <div className="flex items-center justify-between gap-2">
                <span className="text-sm font-semibold text-slate-900">
                  Version {v.version} {current && <Badge tone="green">current</Badge>}
                </span>
                <span className="text-xs text-slate-500">{timeAgo(v.createdAt)}</span>
              </div>
              <p className="truncate text-xs text-slate-500">
                {v.name} · {v.nodeCount} {v.nodeCount === 1 ? "node" : "nodes"}
              </p>
              <div className="mt-1.5 flex gap-1.5">
                {viewing === v.version ? (
                  <Button size="sm" variant="ghost" onClick={() => onView(null)} data-testid={`version-close-${v.version}`}>
                    Back to editing
                  </Button>
                ) : (
                  <Button size="sm" variant="secondary" onClick={() => onView(v.version)} data-testid={`version-view-${v.version}`}>
                    View
                  </Button>
                )}
                {!current && (
                  <Button size="sm" variant="ghost" onClick={() => onRestore(v.version)} loading={restoring && viewing === v.version} data-testid={`version-restore-${v.version}`}>
                    Restore
                  </Button>
                )}
              </div>
            </li>
          );
        })}
      </ul>
    </div>
  );
}
