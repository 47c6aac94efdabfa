"use client";
// Client calls and shapes for AI for every item: the estimate run, the items of an AI node with forEach, usage.
import { api, qs } from "./api";
import type { NodeResult } from "./types";

/** What model calls used: on every AI node's output and, summed, on the run's result. */
export interface AiUsage {
  calls: number;
  inputTokens: number;
  outputTokens: number;
  /** null: no price is known for the model (never a guess shown as a figure). */
  costUsd: number | null;
}

export interface AiEstimateNode {
  items: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number | null;
  /** false: the input tokens are an approximation (no exact tokenizer for this model). */
  exact: boolean;
  sample: { index: number; output: Record<string, unknown> | null; inputTokens: number; outputTokens: number }[];
}

export interface AiEstimate {
  nodes: Record<string, AiEstimateNode>;
  inputTokens: number;
  outputTokens: number;
  costUsd: number | null;
}

export type AiItemStatus = "pending" | "done" | "failed" | "skipped";
export const AI_ITEM_STATUSES: AiItemStatus[] = ["done", "failed", "skipped", "pending"];

export interface AiItem {
  index: number;
  status: AiItemStatus;
  output: Record<string, unknown> | null;
  error: string | null;
  inputTokens: number | null;
  outputTokens: number | null;
  reused: boolean;
}

export interface AiItemsPage {
  items: AiItem[];
  total: number;
  counts: Record<AiItemStatus, number>;
  /** The node's forEach in the run's snapshot, e.g. "{{src.rows}}". */
  forEach: string;
}

/** Items an estimate asks the model for per AI node (the endpoint allows 1–20). */
export const ESTIMATE_SAMPLE = 3;

export const startEstimate = (workflowId: string, sample = ESTIMATE_SAMPLE) =>
  api.post<{ runId: string; workflowId: string; status: string }>(`/api/workflows/${workflowId}/run`, { mode: "estimate", sample });

export const fetchAiItems = (runId: string, nodeId: string, query: { status?: AiItemStatus; offset?: number; limit?: number }) =>
  api.get<AiItemsPage>(`/api/workflows/runs/${runId}/nodes/${nodeId}/items${qs(query)}`);

/** "$0.0123", "$12.40", "under $0.0001"; "unknown" when no price is known. */
export function formatUsd(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return "unknown";
  if (value === 0) return "$0.00";
  if (value < 0.0001) return "under $0.0001";
  if (value < 1) return `$${value.toFixed(4)}`;
  return `$${value.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

/** The usage an AI node's output carries, when it is well formed. */
export function usageOf(output: Record<string, unknown> | null | undefined): AiUsage | null {
  const usage = output?.usage as Partial<AiUsage> | undefined;
  if (!usage || typeof usage !== "object" || typeof usage.calls !== "number") return null;
  return {
    calls: usage.calls,
    inputTokens: Number(usage.inputTokens ?? 0),
    outputTokens: Number(usage.outputTokens ?? 0),
    costUsd: typeof usage.costUsd === "number" ? usage.costUsd : null,
  };
}

/** `{{node.field}}` (a lone reference) as its parts: where an AI node's items come from, to show each item beside its answer. */
export function loneRef(template: unknown): { nodeId: string; field: string } | null {
  if (typeof template !== "string") return null;
  const match = /^\s*\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}\s*$/.exec(template);
  return match ? { nodeId: match[1], field: match[2] } : null;
}

/** The declared fields present in a page's answers, in first-seen order. */
export function answerFields(items: { output: Record<string, unknown> | null }[]): string[] {
  const seen = new Set<string>();
  for (const item of items) for (const key of Object.keys(item.output ?? {})) seen.add(key);
  return [...seen];
}

const shown = (value: unknown) => (value === null || value === undefined ? "" : typeof value === "object" ? JSON.stringify(value) : String(value));

/** A list element in a few words (its first two text or number values: an upload row's name and email), and in full. */
export function describeElement(element: unknown): { text: string; title: string } {
  if (element === null || typeof element !== "object" || Array.isArray(element)) return { text: shown(element), title: shown(element) };
  const values = Object.values(element as Record<string, unknown>).filter((v) => (typeof v === "string" && v.trim() !== "") || typeof v === "number");
  return { text: values.slice(0, 2).map(String).join(" · "), title: JSON.stringify(element) };
}

/** An AI node with forEach (its output has `items` and `count`, or its running progress is `{ done, total }`). */
export function isAiForEach(result: NodeResult | undefined): boolean {
  if (!result || result.type !== "AI") return false;
  if (result.progress && "done" in result.progress) return true;
  const output = result.output;
  return !!output && "count" in output && "failed" in output;
}
