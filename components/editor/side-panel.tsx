"use client";
import { memo, useMemo, useState } from "react";
import { useUploads } from "@/lib/client/hooks";
import type { Graph, NodeType, Run, RunSummary, ValidationResult } from "@/lib/client/types";
import { Alert, Button, Select, StatusBadge, cx, formatCount, formatDuration } from "@/components/ui";
import { RunHistory, RunLogList, RunSummaryCard } from "@/components/runs/run-details";
import { RunActions, RunOrigin } from "@/components/runs/run-actions";
import { ConfigPanel } from "./config-panel";
import { EdgePanel } from "./edge-panel";
import type { FlowEdge } from "./mapper";
import { templateSuggestions } from "./suggestions";
import dynamic from "next/dynamic";
// A run's node output (tables, AI items) loads when a node of a run is inspected, not with the editor.
const NodeOutput = dynamic(() => import("@/components/runs/node-output").then((m) => m.NodeOutput), { ssr: false });
// Opened on demand (the Versions tab): kept out of the editor's first load.
const VersionsPanel = dynamic(() => import("./versions-panel").then((m) => m.VersionsPanel), {
  loading: () => <p className="p-4 text-sm text-slate-500">Loading versions…</p>,
});

type Tab = "node" | "run" | "versions";

export interface PanelActions {
  updateConfig: (nodeId: string, config: Record<string, unknown>) => void;
  renameNode: (oldId: string, newId: string) => string | null;
  removeNode: (nodeId: string) => void;
  updateCondition: (edgeId: string, condition: string) => void;
  removeEdge: (edgeId: string) => void;
  connect: (source: string, target: string) => void;
}

/** Versions, "test this node" and the read-only view: what the side panel needs from the editor beyond the graph. */
export interface EditorExtras {
  workflowId: string | null;
  currentVersion: number;
  viewingVersion: number | null;
  onViewVersion: (version: number | null) => void;
  onRestoreVersion: (version: number) => void;
  restoring: boolean;
  /** The canvas shows a stored version (or the screen is too narrow to edit): nothing can change. */
  readOnly: boolean;
  onTestNode: (nodeId: string) => void;
  testingNodeId: string | null;
  /** The run opened by "Test this node": its output shows in the inspector, so the tab stays there. */
  testRunId: string | null;
  /** The shown run ran another version than the canvas: offer to show it on its own graph. */
  runVersionElsewhere: number | null;
  onShowRunGraph: () => void;
  selectionCount: number;
  edgeIssues: ReadonlyMap<string, string[]>;
  /** Counts clicks on canvas nodes: a click on the already selected node still brings the inspector forward. */
  nodeClicks: number;
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
  extras: EditorExtras;
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
  const nodeClicks = props.extras.nodeClicks;
  const [seen, setSeen] = useState({ runId, selectionKey, nodeClicks });
  if (seen.runId !== runId || seen.selectionKey !== selectionKey || seen.nodeClicks !== nodeClicks) {
    setSeen({ runId, selectionKey, nodeClicks });
    if ((seen.selectionKey !== selectionKey && selectionKey) || seen.nodeClicks !== nodeClicks) setTab("node");
    else if (seen.runId !== runId && runId && runId !== props.extras.testRunId) setTab("run");
  }

  const uploads = useUploads();
  const columnsByUpload = useMemo(
    () => Object.fromEntries((uploads.data?.items ?? []).map((u) => [u.uploadId, u.columns])),
    [uploads.data],
  );

  return (
    <aside className="flex w-80 shrink-0 flex-col border-l border-slate-200 bg-white xl:w-96" aria-label="Inspector">
      <div className="flex border-b border-slate-200 text-sm" role="tablist">
        {(["node", "run", "versions"] as const).map((t) => (
          <button
            key={t}
            role="tab"
            aria-selected={tab === t}
            data-testid={`tab-${t}`}
            onClick={() => setTab(t)}
            className={cx("flex-1 whitespace-nowrap py-2.5 font-medium", tab === t ? "border-b-2 border-brand-600 text-brand-700" : "text-slate-500 hover:text-slate-800")}
          >
            {t === "node" ? "Inspector" : t === "run" ? "Runs" : "Versions"}
            {t === "run" && run && <span className="ml-2 align-middle"><StatusBadge status={run.status} /></span>}
          </button>
        ))}
      </div>
      <div className="min-h-0 flex-1 overflow-y-auto">
        {tab === "versions" ? (
          <VersionsPanel
            workflowId={props.extras.workflowId}
            currentVersion={props.extras.currentVersion}
            viewing={props.extras.viewingVersion}
            onView={props.extras.onViewVersion}
            onRestore={props.extras.onRestoreVersion}
            restoring={props.extras.restoring}
          />
        ) : tab === "node" ? (
          props.extras.selectionCount > 1 ? (
            <div className="space-y-2 p-5 text-sm text-slate-600" data-testid="multi-selection">
              <p className="font-medium text-slate-800">{props.extras.selectionCount} nodes selected</p>
              <p>Drag one to move them together; Delete removes them; Ctrl/Cmd+C copies, Ctrl/Cmd+D duplicates.</p>
            </div>
          ) : selectedNode ? (
            <>
              <NodeActions node={selectedNode} graph={graph} extras={props.extras} onConnect={editor.connect} />
              {run?.nodes?.[selectedNode.id] && <NodeRunCard runId={run.runId} nodeId={selectedNode.id} run={run} />}
              {/* A disabled fieldset makes every control of a stored version read-only at once. */}
              <fieldset disabled={props.extras.readOnly} className="min-w-0">
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
              </fieldset>
            </>
          ) : selectedEdge ? (
            <EdgePanel
              key={selectedEdge.id}
              label={`${selectedEdge.source} → ${selectedEdge.target}`}
              condition={selectedEdge.data?.condition ?? ""}
              suggestions={templateSuggestions(graph, selectedEdge.target, {}).filter((s) => !s.ref.startsWith("item."))}
              onChange={(c) => editor.updateCondition(selectedEdge.id, c)}
              onDelete={() => editor.removeEdge(selectedEdge.id)}
              issues={props.extras.edgeIssues.get(selectedEdge.id)}
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

function RunTab({ run, runId, runError, runs, onOpenRun, onPickNode, workflowSaved, extras }: SidePanelProps) {
  return (
    <div className="space-y-5 p-4" data-testid="run-panel">
      {run && extras.runVersionElsewhere !== null && (
        <Alert tone="amber">
          <span data-testid="run-other-version">
            This run ran version {extras.runVersionElsewhere}, not the graph on the canvas.{" "}
            <button type="button" className="font-medium underline" onClick={extras.onShowRunGraph} data-testid="show-run-graph">
              Show it on its own graph
            </button>
          </span>
        </Alert>
      )}
      {runError && <Alert tone="amber" className="[overflow-wrap:anywhere]">{runError}</Alert>}
      {runId && !run && !runError && <p className="text-sm text-slate-500">Loading run…</p>}
      {run && (
        <>
          <RunSummaryCard run={run} />
          <div className="flex flex-wrap items-center justify-between gap-2">
            <RunOrigin run={run} />
            <RunActions run={run} onRetried={onOpenRun} />
          </div>
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
        {result.error && <p className="rounded-md bg-red-50 px-3 py-2 text-sm text-red-800 [overflow-wrap:anywhere]">{result.error}</p>}
        {(typeof result.itemsIn === "number" || typeof result.itemsOut === "number") && (
          <p className="text-xs text-slate-500">
            {typeof result.itemsIn === "number" ? formatCount(result.itemsIn) : "—"} in · {typeof result.itemsOut === "number" ? formatCount(result.itemsOut) : "—"} out ·{" "}
            {formatDuration(result.startedAt, result.completedAt)}
          </p>
        )}
        <NodeOutput runId={runId} nodeId={nodeId} result={result} />
      </div>
    </details>
  );
}

/** "Test this node" (a preview run up to it) and a keyboard way to connect it to another node. */
function NodeActions({ node, graph, extras, onConnect }: { node: SelectedNode; graph: Graph; extras: EditorExtras; onConnect: (s: string, t: string) => void }) {
  const targets = graph.nodes.filter(
    (n) => n.id !== node.id && n.type !== "TRIGGER" && !graph.edges.some((e) => e.source === node.id && e.target === n.id),
  );
  return (
    <div className="flex flex-wrap items-center gap-2 border-b border-slate-200 px-4 py-3" data-testid="node-actions">
      {node.type !== "TRIGGER" && (
        <Button
          size="sm"
          variant="secondary"
          onClick={() => extras.onTestNode(node.id)}
          loading={extras.testingNodeId === node.id}
          disabled={extras.readOnly}
          title="Run this node and the nodes before it as a preview: nothing is sent"
          data-testid="test-node"
        >
          Test this node
        </Button>
      )}
      {!extras.readOnly && targets.length > 0 && (
        <label className="flex items-center gap-1.5 text-xs text-slate-500">
          Connect to
          <Select
            className="!w-36 !py-1 text-xs"
            value=""
            aria-label={`Connect ${node.id} to another node`}
            data-testid="connect-to"
            onChange={(e) => e.target.value && onConnect(node.id, e.target.value)}
          >
            <option value="">Choose…</option>
            {targets.map((n) => (
              <option key={n.id} value={n.id}>
                {n.id}
              </option>
            ))}
          </Select>
        </label>
      )}
    </div>
  );
}
