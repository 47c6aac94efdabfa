"use client";
// An estimate run's answer: per AI node the items, the tokens (exact or approximate), the cost, and the sample answers
// the model gave, so a person sees what the AI fields will look like and what they will cost before paying.
import { answerFields, type AiEstimate, type AiUsage } from "@/lib/client/ai";
import { formatEstimatedUsd, formatUsage } from "@/lib/client/ai-usage-text";
import { Badge, formatCount } from "@/components/ui";

export function AiEstimateView({ estimate, sampleUsage }: { estimate: AiEstimate; sampleUsage?: AiUsage }) {
  const nodes = Object.entries(estimate.nodes ?? {});
  const approximate = nodes.some(([, n]) => !n.exact);
  return (
    <div className="space-y-4" data-testid="ai-estimate">
      <div className="@container rounded-lg bg-fuchsia-100/40 p-3 ring-1 ring-fuchsia-100">
        <p className="flex flex-wrap items-center gap-2 text-sm font-medium text-slate-800">
          Before anything is paid: the model calls of a full run
          {approximate && (
            <Badge tone="amber" data-testid="estimate-approximate" title="No exact tokenizer is known for this model: the input tokens are counted approximately">
              approximate
            </Badge>
          )}
        </p>
        <dl className="mt-2 grid grid-cols-2 gap-2 @lg:grid-cols-4">
          <Figure label="Items" value={formatCount(nodes.reduce((sum, [, n]) => sum + n.items, 0))} testId="estimate-items" />
          <Figure label="Input tokens" value={`${approximate ? "≈ " : ""}${formatCount(estimate.inputTokens)}`} testId="estimate-input-tokens" />
          <Figure label="Output tokens" value={`≈ ${formatCount(estimate.outputTokens)}`} testId="estimate-output-tokens" />
          <Figure label="Cost" value={formatEstimatedUsd(estimate.costUsd)} testId="estimate-cost" />
        </dl>
        <p className="mt-2 text-xs text-slate-600">
          Output tokens are extrapolated from the sample answers below.
          {estimate.costUsd === null && " No price is known for this model: set prices in Settings → AI provider."}
          {sampleUsage && sampleUsage.calls > 0 && ` The sample itself took ${formatUsage(sampleUsage)}.`}
        </p>
      </div>
      {nodes.map(([nodeId, node]) => {
        const fields = answerFields(node.sample);
        return (
          <section key={nodeId} className="space-y-2" data-testid={`estimate-node-${nodeId}`}>
            <h3 className="flex flex-wrap items-baseline gap-x-2 text-sm font-medium text-slate-800">
              <span className="font-mono">{nodeId}</span>
              <span className="text-xs font-normal text-slate-500">
                {formatCount(node.items)} {node.items === 1 ? "item" : "items"} · {node.exact ? "" : "≈ "}
                {formatCount(node.inputTokens)} in · ≈ {formatCount(node.outputTokens)} out · {node.costUsd === null ? "cost unknown" : formatEstimatedUsd(node.costUsd)}
              </span>
            </h3>
            {node.sample.length === 0 ? (
              <p className="text-sm text-slate-500">No sample answer (the list is empty).</p>
            ) : (
              <div className="overflow-x-auto rounded-lg ring-1 ring-slate-200">
                <table className="min-w-full text-sm" data-testid="estimate-sample">
                  <thead className="bg-slate-50 text-left text-xs font-medium text-slate-600">
                    <tr>
                      <th className="w-10 px-3 py-2 text-right">#</th>
                      {fields.map((f) => (
                        <th key={f} className="px-3 py-2 font-mono">{f}</th>
                      ))}
                      <th className="whitespace-nowrap px-3 py-2 text-right">Tokens in / out</th>
                    </tr>
                  </thead>
                  <tbody className="divide-y divide-slate-100 bg-white">
                    {node.sample.map((s) => (
                      <tr key={s.index} className="align-top" data-testid="estimate-sample-row">
                        <td className="px-3 py-2 text-right font-mono text-xs text-slate-500">{s.index}</td>
                        {fields.map((f) => (
                          <td key={f} className={f === "error" ? "min-w-[12rem] px-3 py-2 text-red-700" : "min-w-[10rem] px-3 py-2 text-slate-900"}>
                            <span className="line-clamp-4 break-words">{show(s.output?.[f])}</span>
                          </td>
                        ))}
                        <td className="whitespace-nowrap px-3 py-2 text-right font-mono text-xs text-slate-600">
                          {formatCount(s.inputTokens)} / {formatCount(s.outputTokens)}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </section>
        );
      })}
    </div>
  );
}

function Figure({ label, value, testId }: { label: string; value: string; testId: string }) {
  return (
    <div className="min-w-0 rounded-md bg-white px-3 py-2 ring-1 ring-slate-200">
      <dt className="text-[11px] text-slate-600">{label}</dt>
      <dd className="truncate text-base font-semibold tabular-nums text-slate-900" data-testid={testId} title={value}>
        {value}
      </dd>
    </div>
  );
}

function show(value: unknown): string {
  if (value === null || value === undefined) return "";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}
