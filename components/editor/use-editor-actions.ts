"use client";
// What the editor does with the server: save (and the saved state that makes it "Unsaved"), run, test one node,
// restore a version.
import { useQueryClient } from "@tanstack/react-query";
import { useCallback, useEffect, useMemo, useState } from "react";
import { api, ApiError } from "@/lib/client/api";
import { keys, startRun, useSaveWorkflow } from "@/lib/client/hooks";
import type { Graph, Workflow } from "@/lib/client/types";
import { startPreviewUntil, versionKeys } from "@/components/workflows/workflow-api";
import { flowToGraph, graphToFlow } from "./mapper";
import type { useEditorGraph } from "./use-editor-graph";
import { clearLocalDraft, writeLocalDraft } from "./local-draft";
import { structureKey } from "./use-validation";

const snapshot = (name: string, graph: Graph) => JSON.stringify({ name, graph });

export interface EditorActionsInput {
  workflow: Workflow | null;
  /** An imported file, or unsaved work kept in this browser, opened as an unsaved draft. */
  isDraft: boolean;
  editor: ReturnType<typeof useEditorGraph>;
  name: string;
  /** The graph the dirty flag compares (a deferred copy of editor.graph). */
  deferredGraph: Graph;
  runId: string | null;
  setRunId: (runId: string) => void;
  /** Saving makes earlier runs history: the canvas stays on the editable graph. */
  dismissRunView: (runId: string | null) => void;
  setViewVersion: (version: number | null) => void;
}

export function useEditorActions({ workflow, isDraft, editor, name, deferredGraph, runId, setRunId, dismissRunView, setViewVersion }: EditorActionsInput) {
  const queryClient = useQueryClient();
  // "Unsaved" only after a change: an untouched new workflow has nothing to lose. A draft is unsaved from the start.
  const [saved, setSaved] = useState(() => (isDraft ? "" : snapshot(workflow?.name ?? "Untitled workflow", editor.graph)));
  const [workflowId, setWorkflowId] = useState(workflow?.id ?? null);
  const [savedVersion, setSavedVersion] = useState(workflow?.version ?? 0);
  // The saved graph as the editor draws it (through the mapper, like `structure`), also when a draft was restored.
  const [savedStructure, setSavedStructure] = useState(() => {
    if (!workflow) return null;
    const doc = graphToFlow(workflow.graph);
    return structureKey(flowToGraph(doc.nodes, doc.edges));
  });
  // Why the last save or run was refused while the work stays here (and in this browser): the graph's problems.
  const [draftNotice, setDraftNotice] = useState<{ action: "save" | "run"; problems: string[] } | null>(null);
  const save = useSaveWorkflow();
  const [actionError, setActionError] = useState<unknown>(null);
  const [testing, setTesting] = useState<{ nodeId: string; runId: string | null } | null>(null);
  const dirty = useMemo(() => snapshot(name, deferredGraph), [name, deferredGraph]) !== saved;

  // Every unsaved change is kept in this browser as it is made, so nothing is lost when the server refuses a
  // half-built graph, or the tab closes; a saved (or untouched) workflow leaves nothing behind.
  useEffect(() => {
    if (!dirty) {
      clearLocalDraft(workflowId);
      return;
    }
    const timer = setTimeout(() => writeLocalDraft(workflowId, { name, graph: deferredGraph, savedAt: Date.now(), baseVersion: savedVersion }), 300);
    return () => clearTimeout(timer);
  }, [dirty, name, deferredGraph, workflowId, savedVersion]);

  const doSave = useCallback(async (graphOverride?: Graph, action: "save" | "run" = "save"): Promise<string | null> => {
    setActionError(null);
    setDraftNotice(null);
    const graph = graphOverride ?? editor.graph;
    try {
      const result = await save.mutateAsync({ id: workflowId, name: name.trim() || "Untitled workflow", graph });
      clearLocalDraft(workflowId);
      if (!workflowId) clearLocalDraft(result.id);
      setSaved(snapshot(name, graph));
      setSavedVersion(result.version);
      setSavedStructure(structureKey(graph));
      // Earlier runs are history now: stay on the editable graph.
      dismissRunView(runId);
      if (workflowId) void queryClient.invalidateQueries({ queryKey: versionKeys.list(workflowId) });
      if (!workflowId) {
        setWorkflowId(result.id);
        window.history.replaceState(null, "", `/workflows/${result.id}`);
      }
      return result.id;
    } catch (e) {
      if (e instanceof ApiError && e.code === "invalid_graph") {
        // A half-built graph: the work stays in the editor and in this browser; the problems say what is missing.
        writeLocalDraft(workflowId, { name, graph, savedAt: Date.now(), baseVersion: savedVersion });
        setDraftNotice({ action, problems: e.errors.map((error) => error.message) });
      } else setActionError(e);
      return null;
    }
  }, [save, workflowId, name, editor.graph, runId, queryClient, dismissRunView, savedVersion]);

  const doRun = useCallback(async () => {
    const id = dirty || !workflowId ? await doSave(undefined, "run") : workflowId;
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
  }, [dirty, workflowId, doSave, queryClient, setRunId]);

  const testNode = useCallback(
    async (nodeId: string) => {
      setTesting({ nodeId, runId: null });
      const id = dirty || !workflowId ? await doSave(undefined, "run") : workflowId;
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
    [dirty, workflowId, doSave, queryClient, setRunId],
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
        // Restoring is an edit like any other (undoable), saved at once as the next version.
        const doc = graphToFlow(stored.graph);
        editor.commit(doc);
        if (await doSave(flowToGraph(doc.nodes, doc.edges))) setViewVersion(null);
      } catch (e) {
        setActionError(e);
      }
    },
    [workflowId, queryClient, editor, doSave, setViewVersion],
  );

  return { workflowId, savedVersion, savedStructure, dirty, save, actionError, draftNotice, dismissDraftNotice: () => setDraftNotice(null), testing, doSave, doRun, testNode, restoreVersion };
}
