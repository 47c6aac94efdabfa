"use client";
import "@xyflow/react/dist/style.css";
import { Background, Controls, MiniMap, ReactFlow, ReactFlowProvider, useReactFlow, type EdgeTypes, type NodeTypes } from "@xyflow/react";
import { useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useSearchParams } from "next/navigation";
import { useCallback, useDeferredValue, useEffect, useEffectEvent, useMemo, useRef, useState } from "react";
import { api, errorMessage } from "@/lib/client/api";
import { keys, startRun, useSaveWorkflow, useUploads, useWorkflow, useWorkflowRuns } from "@/lib/client/hooks";
import { isFinished, useRun } from "@/lib/client/use-run";
import type { Graph, NodeType, RunSummary, ValidationResult, Workflow } from "@/lib/client/types";
import { Badge, Button, ErrorAlert, Input, PageSpinner, cx } from "@/components/ui";
import { ConditionEdge } from "./condition-edge";
import { FlowNodeComponent, NodeOverlaysContext, UploadNamesContext, type NodeOverlay } from "./flow-node";
import { flowToGraph, graphToFlow, type FlowEdge, type FlowNode } from "./mapper";
import { DRAG_MIME, Palette } from "./palette";
import { SidePanel, type EditorExtras, type PanelActions, type SelectedNode } from "./side-panel";
import { useClipboard } from "./use-clipboard";
import { useMediaQuery } from "./use-media";
import { useTheme } from "@/components/shell/theme";
import { startPreviewUntil, takeImportDraft, useWorkflowVersion, versionKeys } from "@/components/workflows/workflow-api";
import { useEditorGraph } from "./use-editor-graph";
import { PreviewButton } from "./preview-dialog";
import { useOverlays } from "./use-overlays";
import { structureKey, useGraphStructure, useValidation } from "./use-validation";

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
const NO_SELECTION = new Set<string>();
const EMPTY_DOC: { nodes: FlowNode[]; edges: FlowEdge[] } = { nodes: [], edges: [] };

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
  // An imported file (workflow list → Import) opens here as an unsaved draft: its problems show before any save.
  const [draft] = useState(() => (workflow || params.get("import") === null ? null : takeImportDraft()));
  const editor = useEditorGraph(workflow?.graph ?? draft?.graph ?? NEW_GRAPH);
  const [name, setName] = useState(workflow?.name ?? draft?.name ?? "Untitled workflow");
  // "Unsaved" only after a change: an untouched new workflow has nothing to lose. A draft is unsaved from the start.
  const [saved, setSaved] = useState(() => (draft ? "" : snapshot(workflow?.name ?? "Untitled workflow", editor.graph)));
  const [workflowId, setWorkflowId] = useState(workflow?.id ?? null);
  const [savedVersion, setSavedVersion] = useState(workflow?.version ?? 0);
  const [savedStructure, setSavedStructure] = useState(() => (workflow ? structureKey(editor.graph) : null));
  const save = useSaveWorkflow();
  const [actionError, setActionError] = useState<unknown>(null);
  const [runId, setRunId] = useState<string | null>(params.get("run"));
  const { run, error: runError } = useRun(runId);
  const theme = useTheme();
  // Below 768 px the canvas is for looking (and running), not editing: there is no room for palette and inspector.
  const wide = useMediaQuery("(min-width: 768px)");
  const roomy = useMediaQuery("(min-width: 1024px)");
  const [viewVersion, setViewVersion] = useState<number | null>(null);
  // A run opened from history that ran another version is drawn on that version's graph, read-only, until the
  // person goes back to editing (or saves, which makes every earlier run history).
  const [runViewDismissed, setRunViewDismissed] = useState<string | null>(null);
  const [testing, setTesting] = useState<{ nodeId: string; runId: string | null } | null>(null);
  const [viewSelected, setViewSelected] = useState<string | null>(null);
  const [nodeClicks, setNodeClicks] = useState(0);
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
  const graphChanged = savedStructure !== null && structureKey(structure) !== savedStructure;
  const runVersion = run?.workflowVersion ?? null;
  const runElsewhere = !!run && runVersion !== null && (!workflowId || runVersion !== savedVersion);
  const shownVersion = viewVersion ?? (runElsewhere && runId !== runViewDismissed && workflowId ? runVersion : null);
  const versionQuery = useWorkflowVersion(workflowId, shownVersion);
  const versionDoc = useMemo(() => (versionQuery.data ? graphToFlow(versionQuery.data.graph) : null), [versionQuery.data]);
  const viewing = shownVersion !== null;
  const readOnly = viewing || !wide;
  const uploads = useUploads();
  const uploadNames = useMemo(() => new Map((uploads.data?.items ?? []).map((u) => [u.uploadId, u.filename])), [uploads.data]);

  const selectionCount = viewing ? 0 : editor.present.nodes.reduce((count, n) => count + (n.selected ? 1 : 0), 0);
  const selectedFlowNode = viewing ? (versionDoc?.nodes.find((n) => n.id === viewSelected) ?? null) : (editor.present.nodes.find((n) => n.selected) ?? null);
  const selectedEdge = selectedFlowNode || viewing ? null : (editor.present.edges.find((e) => e.selected) ?? null);
  const selId = selectedFlowNode?.id;
  const selType = selectedFlowNode?.data.type;
  const selConfig = selectedFlowNode?.data.config;
  const selectedNode = useMemo<SelectedNode | null>(
    () => (selId && selType && selConfig ? { id: selId, type: selType, config: selConfig } : null),
    [selId, selType, selConfig],
  );
  const { updateConfig, renameNode, removeNode, updateCondition, removeEdge, replace, onConnect } = editor;
  const connect = useCallback((source: string, target: string) => onConnect({ source, target, sourceHandle: null, targetHandle: null }), [onConnect]);
  const actions = useMemo<PanelActions>(
    () => ({ updateConfig, renameNode, removeNode, updateCondition, removeEdge, connect }),
    [updateConfig, renameNode, removeNode, updateCondition, removeEdge, connect],
  );
  // Below 768 px nodes can still be selected (to read a run), never moved or removed.
  const { onNodesChange } = editor;
  const onlySelection = useCallback(
    (changes: Parameters<typeof onNodesChange>[0]) => onNodesChange(changes.filter((c) => c.type === "select")),
    [onNodesChange],
  );
  const openRun = useCallback((id: string) => {
    setRunId(id);
    setRunViewDismissed(null);
    setViewVersion(null);
    setViewSelected(null);
  }, []);
  const pickNode = useCallback(
    (id: string) => replace((doc) => ({ ...doc, nodes: doc.nodes.map((n) => (n.selected === (n.id === id) ? n : { ...n, selected: n.id === id })) })),
    [replace],
  );
  // The canvas shows either the document (with the run when it ran this graph) or a stored version (with its run).
  const canvasDoc = viewing ? (versionDoc ?? EMPTY_DOC) : editor.present;
  const canvasRun = viewing ? (run && runVersion === shownVersion ? run : null) : runElsewhere ? null : run;
  const { nodes: docNodes, edges, overlays, edgeIssues } = useOverlays(
    canvasDoc,
    viewing ? null : validation.result,
    canvasRun,
    viewing ? EMPTY_DOC.edges : structure.edges,
    !viewing && graphChanged,
  );
  const viewSelection = viewing && viewSelected ? new Set([viewSelected]) : NO_SELECTION;
  const nodes = useMemo(
    () => (viewing ? docNodes.map((n) => ({ ...n, selected: viewSelection.has(n.id), draggable: false, connectable: false })) : docNodes),
    // eslint-disable-next-line react-hooks/exhaustive-deps -- viewSelection is derived from viewSelected
    [docNodes, viewing, viewSelected],
  );
  const nodeColor = useCallback((n: FlowNode) => minimapColor(overlays.get(n.id)), [overlays]);

  // Keep the list of runs fresh when a run finishes.
  const finished = isFinished(run);
  useEffect(() => {
    if (finished && workflowId) {
      void queryClient.invalidateQueries({ queryKey: keys.runs(workflowId) });
      void queryClient.invalidateQueries({ queryKey: keys.workflows, exact: true });
    }
  }, [finished, workflowId, queryClient]);

  const doSave = useCallback(async (graphOverride?: Graph): Promise<string | null> => {
    setActionError(null);
    const graph = graphOverride ?? editor.graph;
    try {
      const result = await save.mutateAsync({ id: workflowId, name: name.trim() || "Untitled workflow", graph });
      setSaved(snapshot(name, graph));
      setSavedVersion(result.version);
      setSavedStructure(structureKey(graph));
      // Earlier runs are history now: stay on the editable graph.
      setRunViewDismissed(runId);
      if (workflowId) void queryClient.invalidateQueries({ queryKey: versionKeys.list(workflowId) });
      if (!workflowId) {
        setWorkflowId(result.id);
        window.history.replaceState(null, "", `/workflows/${result.id}`);
      }
      return result.id;
    } catch (e) {
      setActionError(e);
      return null;
    }
  }, [save, workflowId, name, editor.graph, runId, queryClient]);

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

  const testNode = useCallback(
    async (nodeId: string) => {
      setTesting({ nodeId, runId: null });
      const id = dirty || !workflowId ? await doSave() : workflowId;
      if (!id) return setTesting(null);
      try {
        const started = await startPreviewUntil(id, nodeId);
        setTesting({ nodeId, runId: started.runId });
        setRunId(started.runId);
        window.history.replaceState(null, "", `/workflows/${id}?run=${started.runId}`);
        void queryClient.invalidateQueries({ queryKey: keys.runs(id) });
      } catch (e) {
        setActionError(e);
        setTesting(null);
      }
    },
    [dirty, workflowId, doSave, queryClient],
  );

  const restoreVersion = useCallback(
    async (version: number) => {
      if (!workflowId) return;
      setViewVersion(version);
      try {
        const stored = await queryClient.fetchQuery({
          queryKey: versionKeys.one(workflowId, version),
          queryFn: () => api.get<{ graph: Graph }>(`/api/workflows/${workflowId}/versions/${version}`),
          staleTime: Infinity,
        });
        // Restoring is an edit like any other (undoable), saved at once as the next version (CONTRACT 16).
        const doc = graphToFlow(stored.graph);
        editor.commit(doc);
        if (await doSave(flowToGraph(doc.nodes, doc.edges))) setViewVersion(null);
      } catch (e) {
        setActionError(e);
      }
    },
    [workflowId, queryClient, editor, doSave],
  );

  const extras = useMemo<EditorExtras>(
    () => ({
      workflowId,
      currentVersion: savedVersion,
      viewingVersion: shownVersion,
      onViewVersion: (version) => {
        setViewVersion(version);
        setViewSelected(null);
        if (version === null) setRunViewDismissed(runId);
      },
      onRestoreVersion: (version) => void restoreVersion(version),
      restoring: save.isPending,
      readOnly,
      onTestNode: (nodeId) => void testNode(nodeId),
      testingNodeId: testing && (!testing.runId || (testing.runId === runId && !isFinished(run))) ? testing.nodeId : null,
      testRunId: testing?.runId ?? null,
      runVersionElsewhere: runElsewhere && !viewing ? runVersion : null,
      onShowRunGraph: () => setRunViewDismissed(null),
      selectionCount,
      edgeIssues,
      nodeClicks,
    }),
    [workflowId, savedVersion, shownVersion, runId, restoreVersion, save.isPending, readOnly, testNode, testing, run, runElsewhere, viewing, runVersion, selectionCount, edgeIssues, nodeClicks],
  );

  // A version (or a run's version) brought onto the canvas is framed whole, as is the graph after Tidy up.
  const fitKey = `${shownVersion ?? "doc"}:${versionDoc ? "v" : ""}`;
  const lastFitKey = useRef(fitKey);
  useEffect(() => {
    if (lastFitKey.current === fitKey) return;
    lastFitKey.current = fitKey;
    const frame = requestAnimationFrame(() => void flow.fitView(FIT_VIEW_OPTIONS));
    return () => cancelAnimationFrame(frame);
  }, [fitKey, flow]);
  const { autoLayout } = editor;
  const tidyUp = useCallback(() => {
    autoLayout();
    requestAnimationFrame(() => void flow.fitView({ ...FIT_VIEW_OPTIONS, duration: 300 }));
  }, [autoLayout, flow]);

  useShortcuts({ save: () => void doSave(), undo: editor.undo, redo: editor.redo });
  // Pasted nodes land beside the originals, often past the visible canvas: frame the whole graph again.
  const framePasted = useCallback(() => {
    requestAnimationFrame(() => void flow.fitView({ ...FIT_VIEW_OPTIONS, duration: 200 }));
  }, [flow]);
  useClipboard(editor.getPresent, editor.commit, !readOnly, framePasted);
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
        onLayout={tidyUp}
        readOnly={readOnly}
        isNew={!workflowId}
        onSave={() => void doSave()}
        onRun={() => void doRun()}
        preview={<PreviewButton prepare={async () => (dirty || !workflowId ? await doSave() : workflowId)} disabled={readOnly} />}
      />
      {actionError ? <ErrorAlert error={actionError} testId="editor-error" className="mx-4 mt-2" /> : null}
      <div className="flex min-h-0 flex-1">
        {!readOnly && <Palette onAdd={addAtCenter} />}
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
            onNodesChange={viewing ? undefined : readOnly ? onlySelection : editor.onNodesChange}
            onEdgesChange={viewing ? undefined : readOnly ? undefined : editor.onEdgesChange}
            onConnect={readOnly ? undefined : editor.onConnect}
            onReconnect={readOnly ? undefined : editor.onReconnect}
            onNodeDragStart={editor.checkpoint}
            onNodeClick={(_, node) => {
              if (viewing) setViewSelected(node.id);
              setNodeClicks((n) => n + 1);
            }}
            onPaneClick={viewing ? () => setViewSelected(null) : undefined}
            nodesDraggable={!readOnly}
            nodesConnectable={!readOnly}
            edgesReconnectable={!readOnly}
            onlyRenderVisibleElements
            deleteKeyCode={readOnly ? null : DELETE_KEYS}
            colorMode={theme.resolved}
            // Fit only a graph that exists when opened: on an empty canvas the first dropped node would
            // otherwise trigger the fit and jump away from where it was dropped.
            fitView={initialHasNodes}
            fitViewOptions={FIT_VIEW_OPTIONS}
            minZoom={0.1}
            defaultEdgeOptions={DEFAULT_EDGE_OPTIONS}
          >
            <Background gap={20} color={theme.resolved === "dark" ? "#334155" : "#e2e8f0"} />
            {roomy && <MiniMap pannable zoomable className="!bg-white ring-1 ring-slate-200" nodeColor={nodeColor} />}
            <Controls showInteractive={false} />
          </ReactFlow>
          </NodeOverlaysContext.Provider>
          </UploadNamesContext.Provider>
          {viewing && (
            <div className="absolute left-1/2 top-3 z-10 flex max-w-[90%] -translate-x-1/2 flex-wrap items-center gap-2 rounded-lg bg-white px-4 py-2 text-sm shadow-md ring-1 ring-brand-200" data-testid="version-banner" data-version={shownVersion}>
              <span className="font-medium text-slate-800">
                Version {shownVersion}
                {canvasRun ? " — the graph this run ran" : ""} · read-only
              </span>
              {versionQuery.isPending && <span className="text-slate-500">Loading…</span>}
              <ErrorAlert error={versionQuery.error} />
              {shownVersion !== savedVersion && wide && (
                <Button size="sm" variant="secondary" onClick={() => void restoreVersion(shownVersion!)} loading={save.isPending} data-testid="banner-restore">
                  Restore this version
                </Button>
              )}
              <Button size="sm" variant="ghost" onClick={() => extras.onViewVersion(null)} data-testid="back-to-editing">
                Back to editing
              </Button>
            </div>
          )}
          {!wide && !viewing && (
            <p className="absolute left-1/2 top-3 z-10 -translate-x-1/2 rounded-lg bg-white px-3 py-1.5 text-center text-xs text-slate-600 shadow ring-1 ring-slate-200" data-testid="narrow-note">
              Editing needs a wider screen (768 px or more). You can look and run here.
            </p>
          )}
          {!viewing && editor.present.nodes.length === 0 && (
            <div className="pointer-events-none absolute inset-0 z-10 flex items-center justify-center" data-testid="canvas-empty">
              <div className="max-w-sm rounded-xl bg-white/90 px-6 py-5 text-center shadow-sm ring-1 ring-slate-200">
                <p className="font-semibold text-slate-900">Start with a trigger</p>
                <p className="mt-1 text-sm text-slate-500">
                  Drag TRIGGER from the palette onto the canvas, then a DATA_SOURCE, a FILTER or AI step, and an OUTPUT. Connect them top to bottom.
                </p>
              </div>
            </div>
          )}
          {!viewing && graphIssues.length > 0 && editor.present.nodes.length > 0 && (
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
        {wide && <SidePanel
          graph={viewing && versionQuery.data ? versionQuery.data.graph : structure}
          actions={actions}
          selectedNode={selectedNode}
          selectedEdge={selectedEdge}
          issues={validation.result?.errors ?? NO_ISSUES}
          runId={runId}
          run={run}
          runError={runError}
          runs={runs.data?.items ?? NO_RUNS}
          onOpenRun={openRun}
          onPickNode={viewing ? setViewSelected : pickNode}
          workflowSaved={!!workflowId}
          extras={extras}
        />}
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
  /** The "Preview" button (components/editor/preview-dialog.tsx), shown just before "Run". */
  preview?: React.ReactNode;
  /** A stored version or a narrow screen: nothing on the canvas can change, so the editing buttons rest. */
  readOnly?: boolean;
  isNew?: boolean;
}) {
  const { validation } = props;
  const problems = validation.result?.errors.length ?? 0;
  return (
    <div className="flex flex-wrap items-center gap-x-3 gap-y-2 border-b border-slate-200 bg-white px-4 py-2">
      <Link href="/workflows" className="text-sm text-slate-500 hover:text-slate-900" aria-label="Back to workflows">
        ←
      </Link>
      <Input value={props.name} onChange={(e) => props.onName(e.target.value)} className="!w-40 font-medium lg:!w-72" aria-label="Workflow name" data-testid="workflow-name" />
      {props.dirty ? (
        <Badge tone="amber" data-testid="unsaved">Unsaved</Badge>
      ) : props.isNew ? (
        <Badge tone="grey" data-testid="new-workflow-badge">New</Badge>
      ) : (
        <Badge tone="green" data-testid="saved">Saved</Badge>
      )}
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
        <Button variant="ghost" size="sm" onClick={props.onUndo} disabled={!props.canUndo || props.readOnly} title="Undo (Ctrl+Z)" data-testid="undo">
          Undo
        </Button>
        <Button variant="ghost" size="sm" onClick={props.onRedo} disabled={!props.canRedo || props.readOnly} title="Redo (Ctrl+Shift+Z)" data-testid="redo">
          Redo
        </Button>
        <Button variant="ghost" size="sm" onClick={props.onLayout} disabled={props.readOnly} title="Arrange nodes automatically" data-testid="auto-layout">
          Tidy up
        </Button>
        <Button variant="secondary" size="sm" onClick={props.onSave} loading={props.saving} disabled={props.readOnly} title="Save (Ctrl+S)" data-testid="save">
          Save
        </Button>
        {props.preview}
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
