"use client";
// TanStack Query hooks, one per resource. Keys are arrays starting with the resource name so a
// mutation can invalidate a whole family at once.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, qs } from "./api";
import type {
  Account, DriveFile, GoogleStatus, Graph, MailboxMessage, Page, Run, RunSummary, UploadDetail, UploadMeta,
  ValidationResult, Webhook, Workflow, WorkflowSummary,
} from "./types";

export const keys = {
  account: ["account"] as const,
  workflows: ["workflows"] as const,
  workflow: (id: string) => ["workflows", id] as const,
  runs: (workflowId: string) => ["runs", "workflow", workflowId] as const,
  run: (runId: string) => ["runs", runId] as const,
  uploads: ["uploads"] as const,
  upload: (id: string) => ["uploads", id] as const,
  mailbox: (to?: string) => ["mailbox", to ?? ""] as const,
  google: ["google"] as const,
  webhooks: ["webhooks"] as const,
};

export const useAccount = () => useQuery({ queryKey: keys.account, queryFn: () => api.get<Account>("/api/account") });

export const useWorkflows = () =>
  useQuery({ queryKey: keys.workflows, queryFn: () => api.get<Page<WorkflowSummary>>("/api/workflows?limit=100") });

export const useWorkflow = (id: string | null) =>
  useQuery({ queryKey: keys.workflow(id ?? ""), queryFn: () => api.get<Workflow>(`/api/workflows/${id}`), enabled: !!id });

export const useUploads = () =>
  useQuery({ queryKey: keys.uploads, queryFn: () => api.get<Page<UploadMeta>>("/api/uploads?limit=100") });

export const useUpload = (id: string | null | undefined) =>
  useQuery({ queryKey: keys.upload(id ?? ""), queryFn: () => api.get<UploadDetail>(`/api/uploads/${id}`), enabled: !!id, retry: false });

export const useWorkflowRuns = (workflowId: string | null) =>
  useQuery({
    queryKey: keys.runs(workflowId ?? ""),
    queryFn: () => api.get<Page<RunSummary>>(`/api/workflows/${workflowId}/runs?limit=20`),
    enabled: !!workflowId,
  });

export const useMailbox = (to?: string) =>
  useQuery({
    queryKey: keys.mailbox(to),
    queryFn: () => api.get<{ items: MailboxMessage[] }>(`/api/dev/mailbox${qs({ to })}`),
    refetchInterval: 3000,
    retry: false,
  });

export const useGoogleStatus = () =>
  useQuery({ queryKey: keys.google, queryFn: () => api.get<GoogleStatus>("/api/integrations/google/status"), retry: false });

export const useDriveFiles = (q: string, enabled: boolean) =>
  useQuery({
    queryKey: ["google", "files", q],
    queryFn: () => api.get<{ items: DriveFile[] }>(`/api/integrations/google/files${qs({ q })}`),
    enabled,
    retry: false,
  });

export const useWebhooks = () =>
  useQuery({ queryKey: keys.webhooks, queryFn: () => api.get<Page<Webhook> | { items: Webhook[] }>("/api/webhooks") });

export function useSaveWorkflow() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: { id: string | null; name: string; graph: Graph }) =>
      input.id
        ? api.patch<Workflow>(`/api/workflows/${input.id}`, { name: input.name, graph: input.graph })
        : api.post<Workflow>("/api/workflows", { name: input.name, graph: input.graph }),
    onSuccess: (workflow) => {
      client.setQueryData(keys.workflow(workflow.id), workflow);
      void client.invalidateQueries({ queryKey: keys.workflows, exact: true });
    },
  });
}

export function useDeleteWorkflow() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => api.del(`/api/workflows/${id}`),
    onSuccess: () => client.invalidateQueries({ queryKey: keys.workflows }),
  });
}

export const validateGraph = (graph: Graph) => api.post<ValidationResult>("/api/workflows/validate", { graph });

export const startRun = (workflowId: string) =>
  api.postEmpty<{ runId: string; workflowId: string; status: string; enqueuedAt: string }>(`/api/workflows/${workflowId}/run`, {
    "idempotency-key": crypto.randomUUID(),
  });

export const fetchRun = (runId: string) => api.get<Run>(`/api/workflows/runs/${runId}`);
