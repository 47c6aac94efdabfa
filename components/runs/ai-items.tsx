"use client";
// The run view of AI for every item: what model calls used (a node's usage, the run's ai totals), a running AI
// node's progress (answered and failed of its items, live) and the items table from the items endpoint.
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { api, qs } from "@/lib/client/api";
import { AI_ITEM_STATUSES, fetchAiItems, answerFields, describeElement, loneRef, usageOf, type AiItem, type AiItemStatus } from "@/lib/client/ai";
import type { NodeResult } from "@/lib/client/types";
import { Badge, Button, ErrorAlert, Spinner, cx, formatCount } from "@/components/ui";
import { AiUsageFigures } from "./ai-usage";

const PAGE = 25;
const LIVE_MS = 1500;

const STATUS_WORDS: Record<AiItemStatus, string> = { done: "Answered", failed: "Failed", skipped: "Left out", pending: "Waiting" };
const STATUS_TONE: Record<AiItemStatus, "green" | "red" | "amber" | "grey"> = { done: "green", failed: "red", skipped: "amber", pending: "grey" };

/** Answered / failed / waiting of the node's items, polled while the run is live. */
export function AiProgress({ runId, nodeId, result, live }: { runId: string; nodeId: string; result: NodeResult; live: boolean }) {
  const running = result.status === "RUNNING" || result.status === "PENDING";
  const counts = useQuery({
    // The node's status in the key: when it finishes, its final counts are read once more (the last poll may predate them).
    queryKey: ["runs", runId, "ai-counts", nodeId, running ? "running" : result.status],
    queryFn: () => fetchAiItems(runId, nodeId, { limit: 1 }),
    refetchInterval: live && running ? LIVE_MS : false,
  });
  const progress = result.progress && "done" in result.progress ? result.progress : null;
  const c = counts.data?.counts;
  const total = Math.max(progress?.total ?? 0, counts.data?.total ?? 0, Number(result.output?.count ?? 0) + Number(result.output?.failed ?? 0));
  const done = c?.done ?? (progress ? progress.done : 0);
  const failed = (c?.failed ?? 0) + (c?.skipped ?? 0);
  const pct = (n: number) => (total > 0 ? `${Math.min(100, (n / total) * 100)}%` : "0%");
  return (
    <div className="space-y-1.5" data-testid={`ai-node-progress-${nodeId}`} data-done={done} data-failed={failed} data-total={total}>
      <div className="flex flex-wrap items-baseline justify-between gap-x-3 text-sm">
        <span className="font-medium text-slate-800">
          <span className="tabular-nums" data-testid="ai-progress-done">{formatCount(done)}</span> of <span className="tabular-nums">{formatCount(total)}</span> items answered
          {failed > 0 && (
            <span className="text-red-700">
              {" "}· <span className="tabular-nums" data-testid="ai-progress-failed">{formatCount(failed)}</span> failed
            </span>
          )}
        </span>
        {running && live && (
          <span className="flex items-center gap-1.5 text-xs text-slate-500">
            <Spinner className="h-3 w-3" /> asking the model…
          </span>
        )}
      </div>
      <div className="flex h-2 overflow-hidden rounded-full bg-slate-200" role="progressbar" aria-valuemin={0} aria-valuemax={total} aria-valuenow={done + failed} aria-label={`${nodeId}: items asked`}>
        <span className="block h-full bg-emerald-500 transition-all" style={{ width: pct(done) }} />
        <span className="block h-full bg-red-400 transition-all" style={{ width: pct(failed) }} />
      </div>
    </div>
  );
}

/** Everything the run view says about one AI node with forEach: usage, progress, and its items. */
export function AiNodeSection({ runId, nodeId, result, live }: { runId: string; nodeId: string; result: NodeResult; live: boolean }) {
  const usage = usageOf(result.output);
  return (
    <div className="space-y-4" data-testid={`ai-node-${nodeId}`}>
      <AiProgress runId={runId} nodeId={nodeId} result={result} live={live} />
      {usage && (
        <AiUsageFigures usage={usage} testId="ai-node-usage" label={result.reused ? "Model calls of the run these answers come from (not asked again)" : "This node's model calls"} />
      )}
      <AiItemsTable runId={runId} nodeId={nodeId} live={live && (result.status === "RUNNING" || result.status === "PENDING")} />
    </div>
  );
}

/** The items endpoint as a table: the element, the answer's fields, the status and the error sentence; by status, paged. */
export function AiItemsTable({ runId, nodeId, live }: { runId: string; nodeId: string; live: boolean }) {
  const [status, setStatus] = useState<AiItemStatus | undefined>(undefined);
  const [offset, setOffset] = useState(0);
  const page = useQuery({
    queryKey: ["runs", runId, "ai-items", nodeId, status, offset],
    queryFn: () => fetchAiItems(runId, nodeId, { status, offset, limit: PAGE }),
    placeholderData: keepPreviousData,
    refetchInterval: live ? LIVE_MS * 2 : false,
  });
  const items = page.data?.items ?? [];
  const elements = useElements(runId, page.data?.forEach, items);
  const fields = answerFields(items);
  const counts = page.data?.counts;
  const total = page.data?.total ?? 0;
  const pick = (next: AiItemStatus | undefined) => {
    setStatus(next);
    setOffset(0);
  };
  return (
    <div className="@container space-y-2" data-testid="ai-items">
      <div className="flex flex-wrap items-center gap-1.5" role="group" aria-label="Show items">
        <FilterChip active={status === undefined} onClick={() => pick(undefined)} testId="ai-items-all">
          All {counts ? formatCount(Object.values(counts).reduce((a, b) => a + b, 0)) : ""}
        </FilterChip>
        {AI_ITEM_STATUSES.map((s) =>
          counts && counts[s] > 0 ? (
            <FilterChip key={s} active={status === s} onClick={() => pick(s)} testId={`ai-items-${s}`}>
              {STATUS_WORDS[s]} {formatCount(counts[s])}
            </FilterChip>
          ) : null,
        )}
        {page.isFetching && <Spinner className="h-3.5 w-3.5 text-slate-400" />}
      </div>
      <ErrorAlert error={page.error} testId="ai-items-error" />
      {page.isPending ? (
        <Spinner />
      ) : items.length === 0 ? (
        <p className="rounded-lg bg-slate-50 px-3 py-4 text-center text-sm text-slate-500" data-testid="ai-items-empty">
          {status ? `No ${STATUS_WORDS[status].toLowerCase()} items.` : "No items yet."}
        </p>
      ) : (
        <>
        {/* A narrow place (a phone, the editor's inspector) gets one card per item; the table from 42rem on. */}
        <ul className="space-y-2 @2xl:hidden" data-testid="ai-items-cards">
          {items.map((item) => (
            <li key={item.index} className="rounded-lg bg-white p-3 ring-1 ring-slate-200" data-testid="ai-item-card" data-status={item.status}>
              <div className="flex items-start justify-between gap-2">
                <p className="min-w-0 truncate text-sm text-slate-700" title={elements.get(item.index)?.title}>
                  <span className="mr-1.5 font-mono text-xs text-slate-500">#{item.index}</span>
                  {elements.get(item.index)?.text}
                </p>
                <Badge tone={STATUS_TONE[item.status]}>{STATUS_WORDS[item.status]}</Badge>
              </div>
              {fields.map((f) =>
                item.output && f in item.output ? (
                  <p key={f} className="mt-1.5 break-words text-sm text-slate-900">
                    <span className="block font-mono text-[11px] text-slate-500">{f}</span>
                    {text(item.output[f])}
                  </p>
                ) : null,
              )}
              {item.error && <p className="mt-1.5 break-words text-xs text-red-700">{item.error}</p>}
              {item.inputTokens !== null && (
                <p className="mt-1.5 text-[11px] text-slate-500">
                  {formatCount(item.inputTokens)} tokens in · {formatCount(item.outputTokens ?? 0)} out{item.reused ? " · reused" : ""}
                </p>
              )}
            </li>
          ))}
        </ul>
        <div className="hidden max-h-[32rem] overflow-auto rounded-lg ring-1 ring-slate-200 @2xl:block">
          <table className="min-w-full text-sm" data-testid="ai-items-table">
            <thead className="sticky top-0 z-10 bg-slate-50 text-left text-xs font-medium text-slate-600">
              <tr>
                <th className="w-10 px-3 py-2 text-right">#</th>
                <th className="px-3 py-2">Item</th>
                {fields.map((f) => (
                  <th key={f} className="whitespace-nowrap px-3 py-2 font-mono" data-testid="ai-items-field">
                    {f}
                  </th>
                ))}
                <th className="px-3 py-2">Status</th>
                <th className="whitespace-nowrap px-3 py-2 text-right">Tokens in / out</th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100 bg-white">
              {items.map((item) => (
                <tr key={item.index} data-testid="ai-item-row" data-status={item.status} className="align-top">
                  <td className="px-3 py-2 text-right font-mono text-xs text-slate-500">{item.index}</td>
                  <td className="max-w-[14rem] truncate px-3 py-2 text-slate-700" title={elements.get(item.index)?.title}>
                    {elements.get(item.index)?.text ?? <span className="text-slate-400">item {item.index}</span>}
                  </td>
                  {fields.map((f) => (
                    <td key={f} className="min-w-[10rem] max-w-[24rem] px-3 py-2 text-slate-900" data-testid={`ai-item-${f}`}>
                      <span className="line-clamp-3 break-words" title={text(item.output?.[f])}>{text(item.output?.[f])}</span>
                    </td>
                  ))}
                  <td className="px-3 py-2">
                    <Badge tone={STATUS_TONE[item.status]}>{STATUS_WORDS[item.status]}</Badge>
                    {item.reused && <span className="ml-1 text-[11px] text-slate-500" title="An identical earlier request's answer: not asked again, not paid">reused</span>}
                    {item.error && (
                      <p className="mt-1 min-w-[12rem] max-w-[24rem] break-words text-xs text-red-700" data-testid="ai-item-error">
                        {item.error}
                      </p>
                    )}
                  </td>
                  <td className="whitespace-nowrap px-3 py-2 text-right font-mono text-xs text-slate-600">
                    {item.inputTokens === null ? "—" : formatCount(item.inputTokens)} / {item.outputTokens === null ? "—" : formatCount(item.outputTokens)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        </>
      )}
      {total > PAGE && (
        <div className="flex items-center justify-between text-xs text-slate-600">
          <span data-testid="ai-items-range">
            {formatCount(offset + 1)}–{formatCount(Math.min(offset + PAGE, total))} of {formatCount(total)}
          </span>
          <div className="flex gap-2">
            <Button size="sm" variant="secondary" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))} data-testid="ai-items-prev">
              Previous
            </Button>
            <Button size="sm" variant="secondary" disabled={offset + PAGE >= total} onClick={() => setOffset(offset + PAGE)} data-testid="ai-items-next">
              Next
            </Button>
          </div>
        </div>
      )}
    </div>
  );
}

function FilterChip({ active, onClick, testId, children }: { active: boolean; onClick: () => void; testId: string; children: React.ReactNode }) {
  return (
    <button
      type="button"
      aria-pressed={active}
      onClick={onClick}
      data-testid={testId}
      className={cx("rounded-full px-2.5 py-1 text-xs font-medium ring-1 ring-inset", active ? "bg-brand-600 text-white ring-brand-600" : "bg-white text-slate-700 ring-slate-300 hover:bg-slate-50")}
    >
      {children}
    </button>
  );
}

function text(value: unknown): string {
  if (value === null || value === undefined) return "";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

/** The page's list elements, read from the node the forEach names (only a lone `{{node.field}}`, within one page). */
function useElements(runId: string, forEach: string | undefined, items: AiItem[]): Map<number, { text: string; title: string }> {
  const ref = loneRef(forEach);
  const first = items.length ? items[0].index : 0;
  // At least a page's worth, so a live page that grows by an item keeps its key (and its elements) while it polls.
  const span = items.length ? Math.max(PAGE, items[items.length - 1].index - first + 1) : 0;
  const elements = useQuery({
    queryKey: ["runs", runId, "output", ref?.nodeId, ref?.field, first, span],
    queryFn: () => api.get<{ items: unknown[]; total: number }>(`/api/workflows/runs/${runId}/nodes/${ref!.nodeId}/output${qs({ field: ref!.field, offset: first, limit: span })}`),
    enabled: !!ref && span > 0 && span <= 1000,
    staleTime: Infinity,
    retry: false,
    placeholderData: keepPreviousData,
  });
  const map = new Map<number, { text: string; title: string }>();
  (elements.data?.items ?? []).forEach((element, i) => map.set(first + i, describeElement(element)));
  return map;
}
