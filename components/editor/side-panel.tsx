"use client";
import { memo, useMemo, useState } from "react";
import { useUploads } from "@/lib/client/hooks";
import type { Graph, NodeType, Run, RunSummary, ValidationResult } from "@/lib/client/types";
import { Alert, StatusBadge, cx, formatDuration } from "@/components/ui";
import { NodeOutput } from "@/components/runs/node-output";
import { RunHistory, RunLogList, RunSummaryCard } from "@/components/runs/run-details";
import { ConfigPanel, EdgePanel } from "./config-panel";
import type { FlowEdge } from "./mapper";
import { templateSuggestions } from "./suggestions";

type Tab = "node" | "run";

export interface PanelActions {
  updateConfig: (nodeId: string, config: Record<string, unknown>) => void;
  renameNode: (oldId: string, newId: string) => string | null;
  removeNode: (nodeId: string) => void;
  updateCondition: (edgeId: string, condition: string) => void;
  removeEdge: (edgeId: string) => void;
}

export interface SelectedNode {
  id: string;
  type: NodeType;
  config: Record<string, unknown>;
}

interface SidePanelProps {
  graph: Graph;
  actions: PanelActions;
  selectedNode: SelectedNode | null;
  selectedEdge: FlowEdge | null;
  issues: ValidationResult["errors"];
  runId: string | null;
  run: Run | null;
  runError: string | null;
  runs: RunSummary[];
  onOpenRun: (runId: string) => void;
  onPickNode: (nodeId: string) => void;
  workflowSaved: boolean;
}

// Memoized with stable props (the graph is the position-free structure, which keeps its identity while
// nodes move; the actions never change), so dragging a node on a large canvas does not re-render the
// inspector on every frame.
export const SidePanel = memo(function SidePanel(props: SidePanelProps) {
  const { graph, actions: editor, selectedNode, selectedEdge, run } = props;
  // A new run brings the run tab forward; selecting something brings the node tab forward (a selection
  // wins when both change at once). Adjusted during render by comparing with the values last seen.
  const runId = props.runId;
  const selectionKey = selectedNode?.id ?? selectedEdge?.id ?? null;
  const [tab, setTab] = useState<Tab>(() => (selectionKey || !runId ? "node" : "run"));
  const [seen, setSeen] = useState({ runId, selectionKey });
  if (seen.runId !== runId || seen.selectionKey !== selectionKey) {
    setSeen({ runId, selectionKey });
    if (seen.selectionKey !== selectionKey && selectionKey) setTab("node");
    else if (seen.runId !== runId && runId) setTab("run");
  }

  const uploads = useUploads();
  const columnsByUpload = useMemo(
    () => Object.fromEntries((uploads.data?.items ?? []).map((u) => [u.uploadId, u.columns])),
    [uploads.data],
  );

  return (
    <aside className="flex w-96 shrink-0 flex-col border-l border-slate-200 bg-white" aria-label="Inspector">
      <div className="flex border-b border-slate-200 text-sm" role="tablist">
        {(["node", "run"] as const).map((t) => (
          <button
            key={t}
            role="tab"
            aria-selected={tab === t}
            data-testid={`tab-${t}`}
            onClick={() => setTab(t)}
            className={cx("flex-1 py-2.5 font-medium", tab === t ? "border-b-2 border-brand-600 text-brand-700" : "text-slate-500 hover:text-slate-800")}
          >
            {t === "node" ? "Inspector" : "Runs"}
            {t === "run" && run && <span className="ml-2 align-middle"><StatusBadge status={run.status} /></span>}
          </button>
        ))}
      </div>
      <div className="min-h-0 flex-1 overflow-y-auto">
        {tab === "node" ? (
          selectedNode ? (
            <>
              {run?.nodes?.[selectedNode.id] && <NodeRunCard runId={run.runId} nodeId={selectedNode.id} run={run} />}
              <ConfigPanel
                key={selectedNode.id}
                nodeId={selectedNode.id}
                type={selectedNode.type}
                config={selectedNode.config}
                graph={graph}
                issues={props.issues.filter((i) => i.nodeId === selectedNode.id)}
                columnsByUpload={columnsByUpload}
                onChange={(config) => editor.updateConfig(selectedNode.id, config)}
                onRename={(id) => editor.renameNode(selectedNode.id, id)}
                onDelete={() => editor.removeNode(selectedNode.id)}
              />
            </>
          ) : selectedEdge ? (
            <EdgePanel
              key={selectedEdge.id}
              label={`${selectedEdge.source} → ${selectedEdge.target}`}
              condition={selectedEdge.data?.condition ?? ""}
              suggestions={templateSuggestions(graph, selectedEdge.target, {}).filter((s) => !s.ref.startsWith("item."))}
              onChange={(c) => editor.updateCondition(selectedEdge.id, c)}
              onDelete={() => editor.removeEdge(selectedEdge.id)}
              issue={props.issues.find((i) => i.code === "invalid_expression" && !i.nodeId)?.message}
            />
          ) : (
            <div className="space-y-3 p-5 text-sm text-slate-500" data-testid="inspector-empty">
              <p className="font-medium text-slate-700">Nothing selected</p>
              <p>Click a node to configure it, or an edge to give it a condition.</p>
              <ul className="list-disc space-y-1 pl-5 text-xs">
                <li>Drag nodes from the palette; press Enter on a palette item to add it with the keyboard.</li>
                <li>Tab moves between nodes, arrow keys move the selected one, Delete removes it.</li>
                <li>Ctrl/Cmd+S saves, Ctrl/Cmd+Z undoes, Shift+Ctrl/Cmd+Z redoes.</li>
              </ul>
            </div>
          )
        ) : (
          <RunTab {...props} />
        )}
      </div>
    </aside>
  );
});

function RunTab({ run, runId, runError, runs, onOpenRun, onPickNode, workflowSaved }: SidePanelProps) {
  return (
    <div className="space-y-5 p-4" data-testid="run-panel">
      {runError && <Alert tone="amber">{runError}</Alert>}
      {runId && !run && !runError && <p className="text-sm text-slate-500">Loading run…</p>}
      {run && (
        <>
          <RunSummaryCard run={run} />
          <section>
            <h3 className="mb-2 text-xs font-semibold uppercase tracking-wide text-slate-400">Nodes</h3>
            <ul className="space-y-1">
              {Object.entries(run.nodes ?? {}).map(([id, n]) => (
                <li key={id}>
                  <button onClick={() => onPickNode(id)} className="flex w-full items-center justify-between rounded-md px-2 py-1 text-left text-sm hover:bg-slate-50">
                    <span className="font-mono text-slate-800">{id}</span>
                    <span className="flex items-center gap-2 text-xs text-slate-500">
                      {formatDuration(n.startedAt, n.completedAt)}
                      <StatusBadge status={n.status} />
                    </span>
                  </button>
                </li>
              ))}
            </ul>
          </section>
          <section>
            <h3 className="mb-2 text-xs font-semibold uppercase tracking-wide text-slate-400">Log</h3>
            <RunLogList logs={run.logs ?? []} onPickNode={onPickNode} />
          </section>
        </>
      )}
      <section>
        <h3 className="mb-2 text-xs font-semibold uppercase tracking-wide text-slate-400">History</h3>
        {workflowSaved ? <RunHistory runs={runs} activeRunId={runId} onOpen={onOpenRun} /> : <p className="text-sm text-slate-500">Save the workflow to run it.</p>}
      </section>
    </div>
  );
}

function NodeRunCard({ runId, nodeId, run }: { runId: string; nodeId: string; run: Run }) {
  const result = run.nodes[nodeId];
  return (
    <details open className="border-b border-slate-200 bg-slate-50 px-4 py-3" data-testid="node-run-card">
      <summary className="flex cursor-pointer items-center justify-between text-sm font-medium text-slate-800">
        <span>Output of this run</span>
        <StatusBadge status={result.status} />
      </summary>
      <div className="mt-3 space-y-3">
        {result.error && <p className="rounded-md bg-red-50 px-3 py-2 text-sm text-red-800">{result.error}</p>}
        {(typeof result.itemsIn === "number" || typeof result.itemsOut === "number") && (
          <p className="text-xs text-slate-500">
            {result.itemsIn ?? "—"} in · {result.itemsOut ?? "—"} out · {formatDuration(result.startedAt, result.completedAt)}
          </p>
        )}
        <NodeOutput runId={runId} nodeId={nodeId} result={result} />
      </div>
    </details>
  );
}
