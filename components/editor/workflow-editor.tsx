"use client";
import "@xyflow/react/dist/style.css";
import { Background, Controls, MiniMap, ReactFlow, ReactFlowProvider, useReactFlow, type EdgeTypes, type NodeTypes } from "@xyflow/react";
import { useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useSearchParams } from "next/navigation";
import { useCallback, useDeferredValue, useEffect, useEffectEvent, useMemo, useRef, useState } from "react";
import { errorMessage } from "@/lib/client/api";
import { keys, startRun, useSaveWorkflow, useUploads, useWorkflow, useWorkflowRuns } from "@/lib/client/hooks";
import { isFinished, useRun } from "@/lib/client/use-run";
import type { Graph, NodeType, RunSummary, ValidationResult, Workflow } from "@/lib/client/types";
import { Badge, Button, ErrorAlert, Input, PageSpinner, cx } from "@/components/ui";
import { ConditionEdge } from "./condition-edge";
import { FlowNodeComponent, NodeOverlaysContext, UploadNamesContext, type NodeOverlay } from "./flow-node";
import type { FlowEdge, FlowNode } from "./mapper";
import { DRAG_MIME, Palette } from "./palette";
import { SidePanel, type PanelActions, type SelectedNode } from "./side-panel";
import { useEditorGraph } from "./use-editor-graph";
import { useOverlays } from "./use-overlays";
import { useGraphStructure, useValidation } from "./use-validation";

// Defined once at module level: new objects per render would make React Flow re-create every node.
const nodeTypes: NodeTypes = { flowmail: FlowNodeComponent };
const edgeTypes: EdgeTypes = { condition: ConditionEdge };
const NEW_GRAPH: Graph = { nodes: [], edges: [] };
const NO_ISSUES: ValidationResult["errors"] = [];
const NO_RUNS: RunSummary[] = [];
// Also constants: React Flow copies a changed option object into its store, which wakes every subscriber.
const FIT_VIEW_OPTIONS = { maxZoom: 1, padding: 0.3 };
const DEFAULT_EDGE_OPTIONS = { type: "condition" };
const DELETE_KEYS = ["Backspace", "Delete"];

export function WorkflowEditor({ workflowId }: { workflowId: string | null }) {
  const { data, error, isPending } = useWorkflow(workflowId);
  if (workflowId && isPending) return <PageSpinner label="Opening workflow…" />;
  if (workflowId && (error || !data))
    return (
      <div className="mx-auto max-w-xl p-8">
        <ErrorAlert error={error} />
        <Link href="/workflows" className="mt-4 inline-block text-sm font-medium text-brand-600">← Back to workflows</Link>
      </div>
    );
  return (
    <ReactFlowProvider>
      <EditorBody key={data?.id ?? "new"} workflow={data ?? null} />
    </ReactFlowProvider>
  );
}

const snapshot = (name: string, graph: Graph) => JSON.stringify({ name, graph });

function EditorBody({ workflow }: { workflow: Workflow | null }) {
  const params = useSearchParams();
  const queryClient = useQueryClient();
  const flow = useReactFlow();
  const editor = useEditorGraph(workflow?.graph ?? NEW_GRAPH);
  const [name, setName] = useState(workflow?.name ?? "Untitled workflow");
  const [saved, setSaved] = useState(() => (workflow ? snapshot(workflow.name, editor.graph) : ""));
  const [workflowId, setWorkflowId] = useState(workflow?.id ?? null);
  const save = useSaveWorkflow();
  const [actionError, setActionError] = useState<unknown>(null);
  const [runId, setRunId] = useState<string | null>(params.get("run"));
  const { run, error: runError } = useRun(runId);
  const runs = useWorkflowRuns(workflowId);
  // Derived views (validation, the dirty flag, the inspector) follow a deferred copy of the graph, so
  // React may skip intermediate values while a node is dragged across a large canvas.
  const deferredGraph = useDeferredValue(editor.graph);
  // Positions left out: keeps its identity during a drag, so neither validation nor the inspector redo work.
  const structure = useGraphStructure(deferredGraph);
  const validation = useValidation(structure);
  const canvasRef = useRef<HTMLDivElement>(null);
  const [initialHasNodes] = useState(() => (workflow?.graph.nodes.length ?? 0) > 0);
  const dirty = useMemo(() => snapshot(name, deferredGraph), [name, deferredGraph]) !== saved;
  const uploads = useUploads();
  const uploadNames = useMemo(() => new Map((uploads.data?.items ?? []).map((u) => [u.uploadId, u.filename])), [uploads.data]);

  const selectedFlowNode = editor.present.nodes.find((n) => n.selected) ?? null;
  const selectedEdge = selectedFlowNode ? null : (editor.present.edges.find((e) => e.selected) ?? null);
  const selId = selectedFlowNode?.id;
  const selType = selectedFlowNode?.data.type;
  const selConfig = selectedFlowNode?.data.config;
  const selectedNode = useMemo<SelectedNode | null>(
    () => (selId && selType && selConfig ? { id: selId, type: selType, config: selConfig } : null),
    [selId, selType, selConfig],
  );
  const { updateConfig, renameNode, removeNode, updateCondition, removeEdge, replace } = editor;
  const actions = useMemo<PanelActions>(
    () => ({ updateConfig, renameNode, removeNode, updateCondition, removeEdge }),
    [updateConfig, renameNode, removeNode, updateCondition, removeEdge],
  );
  const pickNode = useCallback(
    (id: string) => replace((doc) => ({ ...doc, nodes: doc.nodes.map((n) => (n.selected === (n.id === id) ? n : { ...n, selected: n.id === id })) })),
    [replace],
  );
  const { nodes, edges, overlays } = useOverlays(editor.present, validation.result, run);
  const nodeColor = useCallback((n: FlowNode) => minimapColor(overlays.get(n.id)), [overlays]);

  // Keep the list of runs fresh when a run finishes.
  const finished = isFinished(run);
  useEffect(() => {
    if (finished && workflowId) {
      void queryClient.invalidateQueries({ queryKey: keys.runs(workflowId) });
      void queryClient.invalidateQueries({ queryKey: keys.workflows, exact: true });
    }
  }, [finished, workflowId, queryClient]);

  const doSave = useCallback(async (): Promise<string | null> => {
    setActionError(null);
    try {
      const result = await save.mutateAsync({ id: workflowId, name: name.trim() || "Untitled workflow", graph: editor.graph });
      setSaved(snapshot(name, editor.graph));
      if (!workflowId) {
        setWorkflowId(result.id);
        window.history.replaceState(null, "", `/workflows/${result.id}`);
      }
      return result.id;
    } catch (e) {
      setActionError(e);
      return null;
    }
  }, [save, workflowId, name, editor.graph]);

  const doRun = useCallback(async () => {
    const id = dirty || !workflowId ? await doSave() : workflowId;
    if (!id) return;
    try {
      const started = await startRun(id);
      setRunId(started.runId);
      // The run is part of the address, so a reload (or a shared link) shows the same run.
      window.history.replaceState(null, "", `/workflows/${id}?run=${started.runId}`);
      void queryClient.invalidateQueries({ queryKey: keys.runs(id) });
    } catch (e) {
      setActionError(e);
    }
  }, [dirty, workflowId, doSave, queryClient]);

  useShortcuts({ save: () => void doSave(), undo: editor.undo, redo: editor.redo });
  useUnsavedGuard(dirty);

  const { addNode } = editor;
  const addAt = useCallback(
    (type: NodeType, clientX: number, clientY: number) => {
      const p = flow.screenToFlowPosition({ x: clientX, y: clientY });
      addNode(type, { x: Math.round(p.x - 120), y: Math.round(p.y - 30) });
    },
    [flow, addNode],
  );
  const addAtCenter = useCallback(
    (type: NodeType) => {
      const box = canvasRef.current?.getBoundingClientRect();
      if (box) addAt(type, box.left + box.width / 2, box.top + box.height / 2);
    },
    [addAt],
  );

  const graphIssues = (validation.result?.errors ?? []).filter((e) => !e.nodeId);
  return (
    <div className="flex h-[calc(100vh-3.5rem)] flex-col" data-testid="editor">
      <Toolbar
        name={name}
        onName={setName}
        dirty={dirty}
        saving={save.isPending}
        running={!!run && !isFinished(run)}
        validation={validation}
        canUndo={editor.canUndo}
        canRedo={editor.canRedo}
        onUndo={editor.undo}
        onRedo={editor.redo}
        onLayout={editor.autoLayout}
        onSave={() => void doSave()}
        onRun={() => void doRun()}
      />
      {actionError ? <ErrorAlert error={actionError} testId="editor-error" className="mx-4 mt-2" /> : null}
      <div className="flex min-h-0 flex-1">
        <Palette onAdd={addAtCenter} />
        <div
          ref={canvasRef}
          className="relative min-w-0 flex-1"
          data-testid="canvas"
          onDragOver={(e) => {
            if (e.dataTransfer.types.includes(DRAG_MIME)) {
              e.preventDefault();
              e.dataTransfer.dropEffect = "move";
            }
          }}
          onDrop={(e) => {
            const type = e.dataTransfer.getData(DRAG_MIME) as NodeType;
            if (!type) return;
            e.preventDefault();
            addAt(type, e.clientX, e.clientY);
          }}
        >
          <UploadNamesContext.Provider value={uploadNames}>
          <NodeOverlaysContext.Provider value={overlays}>
          <ReactFlow<FlowNode, FlowEdge>
            nodes={nodes}
            edges={edges}
            nodeTypes={nodeTypes}
            edgeTypes={edgeTypes}
            onNodesChange={editor.onNodesChange}
            onEdgesChange={editor.onEdgesChange}
            onConnect={editor.onConnect}
            onReconnect={editor.onReconnect}
            onNodeDragStart={editor.checkpoint}
            edgesReconnectable
            onlyRenderVisibleElements
            deleteKeyCode={DELETE_KEYS}
            // Fit only a graph that exists when opened: on an empty canvas the first dropped node would
            // otherwise trigger the fit and jump away from where it was dropped.
            fitView={initialHasNodes}
            fitViewOptions={FIT_VIEW_OPTIONS}
            minZoom={0.1}
            defaultEdgeOptions={DEFAULT_EDGE_OPTIONS}
          >
            <Background gap={20} color="#e2e8f0" />
            <MiniMap pannable zoomable className="!bg-white ring-1 ring-slate-200" nodeColor={nodeColor} />
            <Controls showInteractive={false} />
          </ReactFlow>
          </NodeOverlaysContext.Provider>
          </UploadNamesContext.Provider>
          {editor.present.nodes.length === 0 && (
            <div className="pointer-events-none absolute inset-0 z-10 flex items-center justify-center" data-testid="canvas-empty">
              <div className="max-w-sm rounded-xl bg-white/90 px-6 py-5 text-center shadow-sm ring-1 ring-slate-200">
                <p className="font-semibold text-slate-900">Start with a trigger</p>
                <p className="mt-1 text-sm text-slate-500">
                  Drag TRIGGER from the palette onto the canvas, then a DATA_SOURCE, a FILTER or AI step, and an OUTPUT. Connect them top to bottom.
                </p>
              </div>
            </div>
          )}
          {graphIssues.length > 0 && editor.present.nodes.length > 0 && (
            <div className="absolute bottom-3 left-1/2 z-10 max-w-lg -translate-x-1/2 rounded-lg bg-white px-4 py-2 text-sm shadow-md ring-1 ring-red-200" data-testid="graph-issues">
              <p className="font-medium text-red-700">This graph cannot run yet</p>
              <ul className="mt-1 list-disc pl-5 text-red-700">
                {graphIssues.slice(0, 4).map((i, n) => (
                  <li key={n}>{i.message}</li>
                ))}
              </ul>
            </div>
          )}
        </div>
        <SidePanel
          graph={structure}
          actions={actions}
          selectedNode={selectedNode}
          selectedEdge={selectedEdge}
          issues={validation.result?.errors ?? NO_ISSUES}
          runId={runId}
          run={run}
          runError={runError}
          runs={runs.data?.items ?? NO_RUNS}
          onOpenRun={setRunId}
          onPickNode={pickNode}
          workflowSaved={!!workflowId}
        />
      </div>
      <span className="sr-only" aria-live="polite">{run ? `Run ${run.status.toLowerCase()}` : ""}</span>
      {save.isError && <span className="sr-only">{errorMessage(save.error)}</span>}
    </div>
  );
}

function minimapColor(overlay: NodeOverlay | undefined): string {
  const status = overlay?.run?.status;
  if (status === "SUCCESS") return "#10b981";
  if (status === "FAILED" || overlay?.errors?.length) return "#ef4444";
  if (status === "RUNNING") return "#3366ff";
  return "#cbd5e1";
}

function Toolbar(props: {
  name: string;
  onName: (name: string) => void;
  dirty: boolean;
  saving: boolean;
  running: boolean;
  validation: ReturnType<typeof useValidation>;
  canUndo: boolean;
  canRedo: boolean;
  onUndo: () => void;
  onRedo: () => void;
  onLayout: () => void;
  onSave: () => void;
  onRun: () => void;
}) {
  const { validation } = props;
  const problems = validation.result?.errors.length ?? 0;
  return (
    <div className="flex items-center gap-3 border-b border-slate-200 bg-white px-4 py-2">
      <Link href="/workflows" className="text-sm text-slate-500 hover:text-slate-900" aria-label="Back to workflows">
        ←
      </Link>
      <Input value={props.name} onChange={(e) => props.onName(e.target.value)} className="!w-72 font-medium" aria-label="Workflow name" data-testid="workflow-name" />
      {props.dirty ? <Badge tone="amber" data-testid="unsaved">Unsaved</Badge> : <Badge tone="green" data-testid="saved">Saved</Badge>}
      <span className="text-xs" data-testid="validation-status" data-valid={validation.result?.valid ?? "unknown"}>
        {validation.error ? (
          <span className="text-amber-700">Could not check the graph: {validation.error}</span>
        ) : validation.pending || !validation.result ? (
          <span className="text-slate-400">Checking…</span>
        ) : problems === 0 ? (
          <span className="text-emerald-700">✓ Ready to run</span>
        ) : (
          <span className="text-red-600">{problems} {problems === 1 ? "problem" : "problems"}</span>
        )}
      </span>
      <div className="ml-auto flex items-center gap-1.5">
        <Button variant="ghost" size="sm" onClick={props.onUndo} disabled={!props.canUndo} title="Undo (Ctrl+Z)" data-testid="undo">
          Undo
        </Button>
        <Button variant="ghost" size="sm" onClick={props.onRedo} disabled={!props.canRedo} title="Redo (Ctrl+Shift+Z)" data-testid="redo">
          Redo
        </Button>
        <Button variant="ghost" size="sm" onClick={props.onLayout} title="Arrange nodes automatically" data-testid="auto-layout">
          Tidy up
        </Button>
        <Button variant="secondary" size="sm" onClick={props.onSave} loading={props.saving} title="Save (Ctrl+S)" data-testid="save">
          Save
        </Button>
        <Button size="sm" onClick={props.onRun} loading={props.running} className={cx(props.running && "opacity-80")} data-testid="run">
          {props.running ? "Running" : "Run"}
        </Button>
      </div>
    </div>
  );
}

/** Ctrl/Cmd+S saves everywhere; Ctrl/Cmd+Z and Shift+Z undo and redo unless a text field has focus (its own undo wins). */
function useShortcuts(actions: { save: () => void; undo: () => void; redo: () => void }) {
  // An Effect Event always sees the latest actions without re-subscribing the listener.
  const onKeyEvent = useEffectEvent((e: KeyboardEvent) => {
    if (!(e.ctrlKey || e.metaKey)) return;
    const key = e.key.toLowerCase();
    if (key === "s") {
      e.preventDefault();
      actions.save();
      return;
    }
    const target = e.target as HTMLElement | null;
    if (target?.closest("input, textarea, select, [contenteditable=true]")) return;
    if (key === "z") {
      e.preventDefault();
      if (e.shiftKey) actions.redo();
      else actions.undo();
    } else if (key === "y") {
      e.preventDefault();
      actions.redo();
    }
  });
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => onKeyEvent(e);
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);
}

/**
 * Asks before leaving with unsaved changes: `beforeunload` covers reloads and closing the tab, and a
 * capturing click listener covers in-app links (client-side navigation never fires `beforeunload`).
 */
function useUnsavedGuard(dirty: boolean) {
  useEffect(() => {
    if (!dirty) return;
    const onBeforeUnload = (e: BeforeUnloadEvent) => {
      e.preventDefault();
      e.returnValue = "";
    };
    const onClick = (e: MouseEvent) => {
      const link = (e.target as HTMLElement | null)?.closest("a[href]");
      if (!link || link.getAttribute("target") === "_blank" || e.defaultPrevented) return;
      if (!window.confirm("You have unsaved changes. Leave without saving?")) {
        e.preventDefault();
        e.stopPropagation();
      }
    };
    window.addEventListener("beforeunload", onBeforeUnload);
    document.addEventListener("click", onClick, true);
    return () => {
      window.removeEventListener("beforeunload", onBeforeUnload);
      document.removeEventListener("click", onClick, true);
    };
  }, [dirty]);
}
