"use client";
// Client calls for workflow versions (versions, duplicate, export/import) and the editor's "test this node" run.
// Kept beside the components that use them rather than in the shared lib/client files.
import { useQuery } from "@tanstack/react-query";
import { api } from "@/lib/client/api";
import type { Graph, Page, Workflow } from "@/lib/client/types";

export interface WorkflowVersionSummary {
  version: number;
  name: string;
  nodeCount: number;
  createdAt: string;
}
export interface WorkflowVersion {
  version: number;
  name: string;
  graph: Graph;
  createdAt: string;
}

export const versionKeys = {
  list: (workflowId: string) => ["workflows", workflowId, "versions"] as const,
  one: (workflowId: string, version: number) => ["workflows", workflowId, "versions", version] as const,
};

export const useWorkflowVersions = (workflowId: string | null, enabled = true) =>
  useQuery({
    queryKey: versionKeys.list(workflowId ?? ""),
    queryFn: () => api.get<Page<WorkflowVersionSummary>>(`/api/workflows/${workflowId}/versions?limit=100`),
    enabled: !!workflowId && enabled,
  });

/** A stored version never changes, so it is fetched once and kept. */
export const useWorkflowVersion = (workflowId: string | null, version: number | null) =>
  useQuery({
    queryKey: versionKeys.one(workflowId ?? "", version ?? 0),
    queryFn: () => api.get<WorkflowVersion>(`/api/workflows/${workflowId}/versions/${version}`),
    enabled: !!workflowId && version !== null,
    staleTime: Infinity,
  });

export const duplicateWorkflow = (id: string) => api.post<Workflow>(`/api/workflows/${id}/duplicate`);
export const renameWorkflow = (id: string, name: string) => api.patch<Workflow>(`/api/workflows/${id}`, { name });

/** "Test this node": a preview run of the node and its ancestors only; nothing is sent. */
export const startPreviewUntil = (workflowId: string, nodeId: string) =>
  api.post<{ runId: string; workflowId: string; status: string; enqueuedAt: string }>(
    `/api/workflows/${workflowId}/run`,
    { mode: "preview", until: nodeId },
    { "idempotency-key": crypto.randomUUID() },
  );

// ---- Export / import: `{ name, graph, schedule }` as a JSON file, imported as an unsaved draft.

export interface WorkflowFile {
  name: string;
  graph: Graph;
  schedule?: unknown;
}

const DRAFT_KEY = "flowmail:import-draft";

export async function exportWorkflowFile(id: string): Promise<void> {
  const workflow = await api.get<Workflow & { schedule?: unknown }>(`/api/workflows/${id}`);
  const file: WorkflowFile = { name: workflow.name, graph: workflow.graph, schedule: workflow.schedule ?? null };
  const blob = new Blob([JSON.stringify(file, null, 2)], { type: "application/json" });
  const link = document.createElement("a");
  link.href = URL.createObjectURL(blob);
  link.download = `${workflow.name.replace(/[^\w.-]+/g, "-").replace(/^-+|-+$/g, "") || "workflow"}.flowmail.json`;
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 1000);
}

/** Reads an exported file; throws a sentence a person can act on when it is not one. */
export function parseWorkflowFile(text: string): WorkflowFile {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error("This file is not JSON: export a workflow from Flowmail and import that file.");
  }
  const record = value as Record<string, unknown> | null;
  const graph = record?.graph as Record<string, unknown> | undefined;
  if (!record || typeof record !== "object" || !graph || !Array.isArray(graph.nodes) || !Array.isArray(graph.edges)) {
    throw new Error("This file has no workflow graph: it needs { name, graph: { nodes, edges } }.");
  }
  const name = typeof record.name === "string" && record.name.trim() ? record.name.trim().slice(0, 200) : "Imported workflow";
  return { name, graph: graph as unknown as Graph, schedule: record.schedule ?? null };
}

// The draft read once per import: React may call a state initializer twice (Strict Mode), and the second call must
// see the same draft although the first removed it from storage.
let takenDraft: WorkflowFile | null = null;

/** Hands an imported file to the new-workflow editor, which opens it as an unsaved draft. */
export function stashImportDraft(file: WorkflowFile): void {
  takenDraft = null;
  sessionStorage.setItem(DRAFT_KEY, JSON.stringify(file));
}

export function takeImportDraft(): WorkflowFile | null {
  const text = typeof window === "undefined" ? null : sessionStorage.getItem(DRAFT_KEY);
  if (!text) return takenDraft;
  sessionStorage.removeItem(DRAFT_KEY);
  try {
    takenDraft = parseWorkflowFile(text);
  } catch {
    takenDraft = null;
  }
  return takenDraft;
}
