"use client";
// What the editor does with the server: save (and the saved state that makes it "Unsaved"), run, test one node,
// restore a version.
import { useQueryClient } from "@tanstack/react-query";
import { useCallback, useMemo, useState } from "react";
import { api } from "@/lib/client/api";
import { keys, startRun, useSaveWorkflow } from "@/lib/client/hooks";
import type { Graph, Workflow } from "@/lib/client/types";
import { startPreviewUntil, versionKeys } from "@/components/workflows/workflow-api";
import { flowToGraph, graphToFlow } from "./mapper";
import type { useEditorGraph } from "./use-editor-graph";
import { structureKey } from "./use-validation";

const snapshot = (name: string, graph: Graph) => JSON.stringify({ name, graph });

export interface EditorActionsInput {
  workflow: Workflow | null;
  /** An imported file opened as an unsaved draft. */
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
  const [savedStructure, setSavedStructure] = useState(() => (workflow ? structureKey(editor.graph) : null));
  const save = useSaveWorkflow();
  const [actionError, setActionError] = useState<unknown>(null);
  const [testing, setTesting] = useState<{ nodeId: string; runId: string | null } | null>(null);
  const dirty = useMemo(() => snapshot(name, deferredGraph), [name, deferredGraph]) !== saved;

  const doSave = useCallback(async (graphOverride?: Graph): Promise<string | null> => {
    setActionError(null);
    const graph = graphOverride ?? editor.graph;
    try {
      const result = await save.mutateAsync({ id: workflowId, name: name.trim() || "Untitled workflow", graph });
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
      setActionError(e);
      return null;
    }
  }, [save, workflowId, name, editor.graph, runId, queryClient, dismissRunView]);

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
  }, [dirty, workflowId, doSave, queryClient, setRunId]);

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

  return { workflowId, savedVersion, savedStructure, dirty, save, actionError, testing, doSave, doRun, testNode, restoreVersion };
}
