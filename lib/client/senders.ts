"use client";
// Client calls for an account's senders (its own Resend key, SMTP server or Amazon SES account).
import { useQuery } from "@tanstack/react-query";
import { api } from "./api";

export type SenderKind = "resend" | "smtp" | "ses";

export interface Sender {
  id: string;
  kind: SenderKind;
  name: string;
  from: string;
  replyTo: string | null;
  isDefault: boolean;
  ratePerSecond: number | null;
  dailyQuota: number | null;
  lastError: string | null;
  createdAt: string;
  resend?: { keyLast4: string };
  smtp?: { host: string; port: number; secure: boolean; username: string | null; passwordLast4: string | null };
  ses?: { region: string; accessKeyId: string; configurationSet: string | null; secretLast4: string };
}

export const senderKeys = { all: ["senders"] as const };

export const useSenders = () => useQuery({ queryKey: senderKeys.all, queryFn: () => api.get<{ items: Sender[] }>("/api/senders") });

export const createSender = (body: Record<string, unknown>) => api.post<Sender>("/api/senders", body);
export const makeDefaultSender = (id: string) => api.patch<Sender>(`/api/senders/${id}`, { isDefault: true });
export const deleteSender = (id: string) => api.del(`/api/senders/${id}`);
export const testSender = (id: string) => api.post<{ messageId: string }>(`/api/senders/${id}/test`);
export const resendUnknown = (runId: string) => api.post<{ runId: string; resendOf: string }>(`/api/workflows/runs/${runId}/resend-unknown`);
