"use client";
// The workflow editor page: the document under undo/redo (use-editor-graph), the run and version on show, and the
// pieces around the canvas — toolbar (editor-toolbar), palette, canvas (editor-canvas, canvas-notes), inspector
// (side-panel); saving and running live in use-editor-actions.
import "@xyflow/react/dist/style.css";
import { ReactFlowProvider } from "@xyflow/react";
import { useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useSearchParams } from "next/navigation";
import { useCallback, useDeferredValue, useEffect, useMemo, useRef, useState } from "react";
import { errorMessage } from "@/lib/client/api";
import { keys, useUploads, useWorkflow, useWorkflowRuns } from "@/lib/client/hooks";
import { isFinished, useRun } from "@/lib/client/use-run";
import type { Graph, RunSummary, ValidationResult, Workflow } from "@/lib/client/types";
import { ErrorAlert, PageSpinner, humanize } from "@/components/ui";
import { takeImportDraft, useWorkflowVersion } from "@/components/workflows/workflow-api";
import { EmptyCanvasNote, GraphIssues, NarrowNote, VersionBanner } from "./canvas-notes";
import { EditorCanvas } from "./editor-canvas";
import { Toolbar } from "./editor-toolbar";
import { readLocalDraft } from "./local-draft";
import { graphToFlow, type FlowEdge, type FlowNode } from "./mapper";
import { Palette } from "./palette";
import { PreviewButton } from "./preview-dialog";
import { SidePanel, type EditorExtras, type PanelActions, type SelectedNode } from "./side-panel";
import { useCanvasFraming } from "./use-canvas-framing";
import { useClipboard } from "./use-clipboard";
import { useEditorActions } from "./use-editor-actions";
import { useEditorGraph } from "./use-editor-graph";
import { useShortcuts, useUnsavedGuard } from "./use-editor-shortcuts";
import { useMediaQuery } from "./use-media";
import { useOverlays } from "./use-overlays";
import { structureKey, useGraphStructure, useValidation } from "./use-validation";

const NEW_GRAPH: Graph = { nodes: [], edges: [] };
const NO_ISSUES: ValidationResult["errors"] = [];
const NO_RUNS: RunSummary[] = [];
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

function EditorBody({ workflow }: { workflow: Workflow | null }) {
  const params = useSearchParams();
  const queryClient = useQueryClient();
  // An imported file (workflow list → Import) opens here as an unsaved draft: its problems show before any save.
  const [draft] = useState(() => (workflow || params.get("import") === null ? null : takeImportDraft()));
  // Unsaved work this browser kept (a half-built graph the server would not store yet, or a tab closed before
  // saving) comes back when the workflow is opened again from the same version.
  const [restored, setRestored] = useState(() => (draft ? null : readLocalDraft(workflow?.id ?? null, workflow?.version ?? 0)));
  const editor = useEditorGraph(restored?.graph ?? workflow?.graph ?? draft?.graph ?? NEW_GRAPH);
  const [name, setName] = useState(restored?.name ?? workflow?.name ?? draft?.name ?? "Untitled workflow");
  const [runId, setRunId] = useState<string | null>(params.get("run"));
  const { run, error: runError } = useRun(runId);
  // Below 768 px the canvas is for looking (and running), not editing: there is no room for palette and inspector.
  const wide = useMediaQuery("(min-width: 768px)");
  const roomy = useMediaQuery("(min-width: 1024px)");
  const [viewVersion, setViewVersion] = useState<number | null>(null);
  // A run opened from history that ran another version is drawn on that version's graph, read-only, until the
  // person goes back to editing (or saves, which makes every earlier run history).
  const [runViewDismissed, setRunViewDismissed] = useState<string | null>(null);
  const [viewSelected, setViewSelected] = useState<string | null>(null);
  const [sheetOpen, setSheetOpen] = useState(false);
  const [nodeClicks, setNodeClicks] = useState(0);
  // Derived views (validation, the dirty flag, the inspector) follow a deferred copy of the graph, so
  // React may skip intermediate values while a node is dragged across a large canvas.
  const deferredGraph = useDeferredValue(editor.graph);
  const { workflowId, savedVersion, savedStructure, dirty, save, actionError, draftNotice, dismissDraftNotice, testing, doSave, doRun, testNode, restoreVersion } = useEditorActions({
    workflow, isDraft: !!draft || !!restored, editor, name, deferredGraph, runId, setRunId, dismissRunView: setRunViewDismissed, setViewVersion,
  });
  const discardRestored = () => {
    editor.reset(graphToFlow(workflow?.graph ?? NEW_GRAPH));
    setName(workflow?.name ?? "Untitled workflow");
    setRestored(null);
  };
  const runs = useWorkflowRuns(workflowId);
  // Positions left out: keeps its identity during a drag, so neither validation nor the inspector redo work.
  const structure = useGraphStructure(deferredGraph);
  const validation = useValidation(structure);
  const canvasRef = useRef<HTMLDivElement>(null);
  const [initialHasNodes] = useState(() => (workflow?.graph.nodes.length ?? 0) > 0);
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

  // Keep the list of runs fresh when a run finishes.
  const finished = isFinished(run);
  useEffect(() => {
    if (finished && workflowId) {
      void queryClient.invalidateQueries({ queryKey: keys.runs(workflowId) });
      void queryClient.invalidateQueries({ queryKey: keys.workflows, exact: true });
    }
  }, [finished, workflowId, queryClient]);

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

  const { tidyUp, framePasted, addAt, addAtCenter } = useCanvasFraming(editor, canvasRef, `${shownVersion ?? "doc"}:${versionDoc ? "v" : ""}`);
  useShortcuts({ save: () => void doSave(), undo: editor.undo, redo: editor.redo });
  useClipboard(editor.getPresent, editor.commit, !readOnly, framePasted);
  useUnsavedGuard(dirty);

  // Problems of the whole graph, and a cycle (its nodes named in order; its edges are drawn red on the canvas).
  const graphIssues = (validation.result?.errors ?? []).filter((e) => !e.nodeId || e.code === "cycle");
  const sidePanel = (
    <SidePanel
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
    />
  );
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
        preview={<PreviewButton prepare={async () => (dirty || !workflowId ? await doSave(undefined, "run") : workflowId)} disabled={readOnly} estimateFirst={structure.nodes.some((n) => n.type === "AI")} />}
      />
      {actionError ? <ErrorAlert error={actionError} testId="editor-error" className="mx-4 mt-2" /> : null}
      {restored && !draftNotice && (
        <div className="mx-4 mt-2 flex flex-wrap items-center gap-x-3 gap-y-1 rounded-lg bg-brand-50 px-3 py-2 text-sm text-brand-800 ring-1 ring-brand-200" data-testid="draft-restored">
          <span>Your unsaved draft from {new Date(restored.savedAt).toLocaleString()} was kept in this browser and is back.</span>
          <button type="button" className="font-medium underline" onClick={() => setRestored(null)}>OK</button>
          <button type="button" className="font-medium underline" onClick={discardRestored} data-testid="draft-discard">
            Discard it
          </button>
        </div>
      )}
      {draftNotice && (
        <div role="status" className="mx-4 mt-2 rounded-lg bg-amber-50 px-3 py-2 text-sm text-amber-800 ring-1 ring-amber-200" data-testid="draft-notice">
          <p className="font-medium">
            {draftNotice.action === "run"
              ? `Not run: the workflow has ${draftNotice.problems.length === 1 ? "a problem" : `${draftNotice.problems.length} problems`} to fix first. Your work is kept as a draft in this browser.`
              : `Kept as a draft in this browser: nothing is lost. The workflow is saved to your account once ${draftNotice.problems.length === 1 ? "this problem is" : `these ${draftNotice.problems.length} problems are`} fixed.`}
          </p>
          <ul className="mt-1 list-disc pl-5">
            {draftNotice.problems.slice(0, 5).map((problem, i) => (
              <li key={i}>{humanize(problem)}</li>
            ))}
            {draftNotice.problems.length > 5 && <li>…and {draftNotice.problems.length - 5} more (on the nodes).</li>}
          </ul>
          <button type="button" className="mt-1 font-medium underline" onClick={dismissDraftNotice}>
            Close
          </button>
        </div>
      )}
      <div className="flex min-h-0 flex-1">
        {!readOnly && <Palette onAdd={addAtCenter} />}
        <EditorCanvas
          canvasRef={canvasRef}
          onDropNode={addAt}
          uploadNames={uploadNames}
          overlays={overlays}
          nodes={nodes}
          edges={edges}
          viewing={viewing}
          readOnly={readOnly}
          editor={editor}
          onlySelection={onlySelection}
          onNodeClick={(id) => {
            if (viewing) setViewSelected(id);
            setNodeClicks((n) => n + 1);
            if (!wide) setSheetOpen(true);
          }}
          onPaneClick={viewing ? () => setViewSelected(null) : undefined}
          fitView={initialHasNodes}
          showMinimap={roomy}
        >
          {viewing && (
            <VersionBanner
              version={shownVersion}
              ofRun={!!canvasRun}
              loading={versionQuery.isPending}
              error={versionQuery.error}
              canRestore={shownVersion !== savedVersion && wide}
              restoring={save.isPending}
              onRestore={() => void restoreVersion(shownVersion)}
              onBack={() => extras.onViewVersion(null)}
            />
          )}
          {!wide && !viewing && <NarrowNote />}
          {!viewing && editor.present.nodes.length === 0 && <EmptyCanvasNote />}
          {!viewing && graphIssues.length > 0 && editor.present.nodes.length > 0 && <GraphIssues issues={graphIssues} />}
        </EditorCanvas>
        {wide && sidePanel}
      </div>
      {!wide && sheetOpen && selectedNode && (
        // Below 768 px there is no room beside the canvas: a tapped node's details open in a sheet over its lower part.
        <div className="fixed inset-x-0 bottom-0 z-40 flex h-[60vh] flex-col rounded-t-xl bg-white shadow-2xl ring-1 ring-slate-200 [&>aside]:min-h-0 [&>aside]:w-full [&>aside]:flex-1 [&>aside]:border-l-0" data-testid="node-sheet">
          <div className="flex items-center justify-between border-b border-slate-200 px-4 py-2">
            <span className="text-sm font-medium text-slate-700">Node details</span>
            <button type="button" className="rounded px-2 py-1 text-sm text-slate-500 hover:bg-slate-100" onClick={() => setSheetOpen(false)} data-testid="node-sheet-close">
              Close
            </button>
          </div>
          {sidePanel}
        </div>
      )}
      <span className="sr-only" aria-live="polite">{run ? `Run ${run.status.toLowerCase()}` : ""}</span>
      {save.isError && <span className="sr-only">{errorMessage(save.error)}</span>}
    </div>
  );
}
