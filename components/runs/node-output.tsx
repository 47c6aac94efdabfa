"use client";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { api, qs } from "@/lib/client/api";
import type { NodeResult } from "@/lib/client/types";
import { Button, ErrorAlert, Spinner } from "@/components/ui";
import { DataTable, columnsOf } from "@/components/uploads/data-table";
import { isAiForEach, usageOf } from "@/lib/client/ai";
import dynamic from "next/dynamic";
import { AiUsageFigures } from "./ai-usage";

// An AI node's progress and items table load when such a node is shown, not with every page that shows node output.
const AiNodeSection = dynamic(() => import("./ai-items").then((m) => m.AiNodeSection), { ssr: false });

const PAGE = 50;

/**
 * A node's output: arrays of objects as paged tables (through the output endpoint), the rest as JSON. An AI node adds
 * what its calls used; one with forEach its progress and items table above.
 */
export function NodeOutput({ runId, nodeId, result }: { runId: string; nodeId: string; result: NodeResult }) {
  if (isAiForEach(result)) {
    const live = result.status === "RUNNING" || result.status === "PENDING";
    return (
      <div className="space-y-5">
        <AiNodeSection runId={runId} nodeId={nodeId} result={result} live={live} />
        {result.output && <OutputFields runId={runId} nodeId={nodeId} result={result} shownAbove={AI_SHOWN_ABOVE} />}
      </div>
    );
  }
  const usage = result.type === "AI" ? usageOf(result.output) : null;
  return (
    <div className="space-y-4">
      {usage && <AiUsageFigures usage={usage} testId="ai-node-usage" label="This node's model call" />}
      <OutputFields runId={runId} nodeId={nodeId} result={result} />
    </div>
  );
}

/** An AI node with forEach's counts and usage: the progress and figures above say them. */
const AI_SHOWN_ABOVE = ["count", "failed", "usage"];

function OutputFields({ runId, nodeId, result, shownAbove = [] }: { runId: string; nodeId: string; result: NodeResult; shownAbove?: string[] }) {
  const output = result.output ?? {};
  const entries = Object.entries(output).filter(([key]) => !shownAbove.includes(key));
  if (entries.length === 0) return <p className="text-sm text-slate-500">{result.status === "SUCCESS" ? "This node has no output fields." : "No output yet."}</p>;
  const arrays = entries.filter(([, v]) => Array.isArray(v));
  const scalars = Object.fromEntries(entries.filter(([, v]) => !Array.isArray(v)));
  return (
    <div className="space-y-4" data-testid="node-output">
      {Object.keys(scalars).length > 0 && (
        <pre className="overflow-auto rounded-lg bg-slate-900 p-3 font-mono text-xs text-slate-100" data-testid="node-output-json">
          {JSON.stringify(scalars, null, 2)}
        </pre>
      )}
      {arrays.map(([field, value]) => (
        <ArrayField key={field} runId={runId} nodeId={nodeId} field={field} inline={value as unknown[]} truncated={result.outputTruncated} />
      ))}
    </div>
  );
}

function ArrayField({ runId, nodeId, field, inline, truncated }: { runId: string; nodeId: string; field: string; inline: unknown[]; truncated: boolean }) {
  const [offset, setOffset] = useState(0);
  // The run view holds the first 100 elements; any other page (or a cut array) comes from the output endpoint.
  const useInline = !truncated && offset + PAGE <= Math.max(inline.length, PAGE);
  const page = useQuery({
    queryKey: ["runs", runId, "output", nodeId, field, offset],
    queryFn: () => api.get<{ items: unknown[]; total: number }>(`/api/workflows/runs/${runId}/nodes/${nodeId}/output${qs({ field, offset, limit: PAGE })}`),
    enabled: !useInline,
    placeholderData: (prev) => prev,
  });
  const items = useInline ? inline.slice(offset, offset + PAGE) : (page.data?.items ?? []);
  const total = useInline ? inline.length : (page.data?.total ?? inline.length);
  const objects = items.length > 0 && items.every((i) => i && typeof i === "object" && !Array.isArray(i));
  return (
    <div data-testid={`node-output-${field}`}>
      <div className="mb-2 flex items-center justify-between">
        <p className="text-sm font-medium text-slate-700">
          <span className="font-mono">{field}</span> <span className="font-normal text-slate-500">· {total} {total === 1 ? "item" : "items"}</span>
        </p>
        {page.isFetching && <Spinner className="h-4 w-4 text-slate-400" />}
      </div>
      <ErrorAlert error={page.error} />
      {objects ? (
        <DataTable columns={columnsOf(items)} rows={items as Record<string, unknown>[]} />
      ) : (
        <pre className="max-h-72 overflow-auto rounded-lg bg-slate-900 p-3 font-mono text-xs text-slate-100">{JSON.stringify(items, null, 2)}</pre>
      )}
      {total > PAGE && (
        <div className="mt-2 flex items-center justify-between text-xs text-slate-500">
          <span>
            {offset + 1}–{Math.min(offset + PAGE, total)} of {total}
          </span>
          <div className="flex gap-2">
            <Button size="sm" variant="secondary" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
              Previous
            </Button>
            <Button size="sm" variant="secondary" disabled={offset + PAGE >= total} onClick={() => setOffset(offset + PAGE)} data-testid="output-next-page">
              Next
            </Button>
          </div>
        </div>
      )}
    </div>
  );
}
