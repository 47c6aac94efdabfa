"use client";
// Client calls for careful sending: previews, the emails of a run, sending a preview, the suppression list.
import { api, qs } from "./api";

export type EmailStatus = "pending" | "sent" | "suppressed" | "duplicate" | "failed" | "preview" | "sending" | "unknown";
export const EMAIL_STATUSES: EmailStatus[] = ["sent", "pending", "sending", "suppressed", "duplicate", "failed", "unknown", "preview"];

export interface RunEmail {
  index: number;
  to: string;
  subject: string;
  status: EmailStatus;
  providerMessageId: string | null;
  sentAt: string | null;
  error: string | null;
  body?: string;
  format?: "text" | "html";
}

export interface RunEmailsPage {
  items: RunEmail[];
  total: number;
  counts: Record<EmailStatus, number>;
  /** Where the next page starts; a page may hold fewer than `limit` items (its byte limit). */
  nextOffset: number | null;
}

export interface Suppression {
  email: string;
  reason: "unsubscribed" | "bounced" | "complained" | "manual";
  createdAt: string;
}

export const startPreview = (workflowId: string) =>
  api.post<{ runId: string; workflowId: string; status: string }>(`/api/workflows/${workflowId}/run`, { mode: "preview" });

export const sendPreview = (runId: string) => api.post<{ runId: string; sendOf: string }>(`/api/workflows/runs/${runId}/send`);

export const fetchRunEmails = (runId: string, nodeId: string, query: { status?: EmailStatus; offset?: number; limit?: number }) =>
  api.get<RunEmailsPage>(`/api/workflows/runs/${runId}/nodes/${nodeId}/emails${qs(query)}`);

export const fetchSuppressions = (query: { q?: string; cursor?: string; limit?: number }) =>
  api.get<{ items: Suppression[]; nextCursor: string | null }>(`/api/suppressions${qs(query)}`);

export const addSuppressions = (emails: string[]) => api.post<{ added: number }>("/api/suppressions", { emails });

export const removeSuppression = (email: string) => api.del(`/api/suppressions/${encodeURIComponent(email)}`);
