"use client";
import { useQuery } from "@tanstack/react-query";
import { useMemo, useState } from "react";
import { api } from "@/lib/client/api";
import { Badge, Card, ErrorAlert, Input, PageHeader, PageSpinner, cx } from "@/components/ui";
import { PageContainer } from "@/components/shell/app-shell";

interface Operation {
  method: string;
  path: string;
  summary?: string;
  description?: string;
  tags?: string[];
  parameters?: unknown[];
  requestBody?: unknown;
  responses?: Record<string, { description?: string; content?: unknown }>;
  security?: unknown[];
  /** The API key scope the operation needs (absent: no auth, or person only). */
  "x-required-scope"?: string;
  "x-person-only"?: boolean;
}
interface OpenApiDoc {
  info?: { title?: string; version?: string; description?: string };
  paths?: Record<string, Record<string, Omit<Operation, "method" | "path">>>;
  components?: { schemas?: Record<string, unknown> };
}

const METHODS = ["get", "post", "put", "patch", "delete"];
const METHOD_TONE: Record<string, string> = {
  GET: "bg-sky-100 text-sky-800",
  POST: "bg-emerald-100 text-emerald-800",
  PUT: "bg-amber-100 text-amber-800",
  PATCH: "bg-violet-100 text-violet-800",
  DELETE: "bg-red-100 text-red-800",
};

/** Operations grouped by their first tag, in document order. */
export function groupOperations(doc: OpenApiDoc): [string, Operation[]][] {
  const groups = new Map<string, Operation[]>();
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const tag = op.tags?.[0] ?? "Other";
      groups.set(tag, [...(groups.get(tag) ?? []), { ...op, method: method.toUpperCase(), path }]);
    }
  }
  return [...groups.entries()];
}

export function ApiReference() {
  const { data, error, isPending } = useQuery({ queryKey: ["openapi"], queryFn: () => api.get<OpenApiDoc>("/api/openapi.json"), staleTime: Infinity });
  const [filter, setFilter] = useState("");
  const groups = useMemo(() => (data ? groupOperations(data) : []), [data]);
  const needle = filter.trim().toLowerCase();
  return (
    <PageContainer wide>
      <PageHeader
        title="API reference"
        description={
          <>
            Everything the editor does, you can do over HTTP with a Bearer token. The raw document is at{" "}
            <a href="/api/openapi.json" className="font-mono text-brand-600">/api/openapi.json</a>
            {data?.info?.version ? <> · version {data.info.version}</> : null}.
          </>
        }
        actions={
          // Input fills its box (w-full), which sets the width.
          <div className="w-64 max-w-full">
            <Input placeholder="Filter operations…" value={filter} onChange={(e) => setFilter(e.target.value)} data-testid="api-filter" />
          </div>
        }
      />
      <ErrorAlert error={error} />
      {isPending ? (
        <PageSpinner />
      ) : (
        // minmax(0, …) on phones too: an auto column would grow to the longest one-line summary and scroll sideways.
        <div className="grid grid-cols-[minmax(0,1fr)] gap-8 lg:grid-cols-[12rem_minmax(0,1fr)]">
          <nav className="sticky top-20 hidden self-start lg:block" aria-label="Tags">
            <ul className="space-y-1 text-sm">
              {groups.map(([tag, ops]) => (
                <li key={tag}>
                  <a href={`#tag-${tag}`} className="flex justify-between rounded-md px-2 py-1 text-slate-600 hover:bg-slate-100">
                    {tag} <span className="text-slate-400">{ops.length}</span>
                  </a>
                </li>
              ))}
            </ul>
          </nav>
          <div className="space-y-8" data-testid="api-groups">
            {groups.map(([tag, ops]) => {
              const shown = ops.filter((o) => !needle || `${o.method} ${o.path} ${o.summary ?? ""}`.toLowerCase().includes(needle));
              if (shown.length === 0) return null;
              return (
                <section key={tag} id={`tag-${tag}`} className="scroll-mt-20">
                  <h2 className="mb-3 text-lg font-semibold capitalize text-slate-900">{tag}</h2>
                  <Card className="divide-y divide-slate-100">
                    {shown.map((op) => (
                      <OperationRow key={`${op.method} ${op.path}`} op={op} />
                    ))}
                  </Card>
                </section>
              );
            })}
            {data?.components?.schemas && (
              <section>
                <h2 className="mb-3 text-lg font-semibold text-slate-900">Schemas</h2>
                <Card className="divide-y divide-slate-100">
                  {Object.entries(data.components.schemas).map(([name, schema]) => (
                    <details key={name} className="px-4 py-2">
                      <summary className="cursor-pointer font-mono text-sm text-slate-800">{name}</summary>
                      <Json value={schema} />
                    </details>
                  ))}
                </Card>
              </section>
            )}
          </div>
        </div>
      )}
    </PageContainer>
  );
}

function OperationRow({ op }: { op: Operation }) {
  const [open, setOpen] = useState(false);
  const body = (op.requestBody as { content?: Record<string, { schema?: unknown }> } | undefined)?.content;
  return (
    <div data-testid="api-operation">
      {/* On a phone the path breaks where it must and the summary wraps on its own line below; from 640 px one line. */}
      <button onClick={() => setOpen(!open)} aria-expanded={open} className="flex w-full flex-wrap items-center gap-x-3 gap-y-1 px-4 py-3 text-left hover:bg-slate-50 sm:flex-nowrap">
        <span className={cx("w-16 shrink-0 rounded px-2 py-0.5 text-center font-mono text-xs font-semibold", METHOD_TONE[op.method])}>{op.method}</span>
        <span className="min-w-0 break-all font-mono text-sm text-slate-900 sm:shrink-0 sm:break-normal">{op.path}</span>
        <span className="w-full text-sm text-slate-500 sm:w-auto sm:min-w-0 sm:flex-1 sm:truncate" title={op.summary}>{op.summary}</span>
        {op.security && op.security.length === 0 && <Badge className="shrink-0">no auth</Badge>}
        {op["x-required-scope"] && <Badge className="shrink-0 font-mono" title="The scope an API key needs">{op["x-required-scope"]}</Badge>}
        {op["x-person-only"] && <Badge className="shrink-0" title="API keys cannot call this endpoint">person only</Badge>}
      </button>
      {open && (
        <div className="space-y-4 border-t border-slate-100 bg-slate-50/60 px-4 py-4 text-sm">
          {op.description && <p className="text-slate-600">{op.description}</p>}
          {op.parameters && op.parameters.length > 0 && (
            <div>
              <h4 className="mb-1 text-xs font-semibold uppercase tracking-wide text-slate-400">Parameters</h4>
              <Json value={op.parameters} />
            </div>
          )}
          {body && (
            <div>
              <h4 className="mb-1 text-xs font-semibold uppercase tracking-wide text-slate-400">Request body</h4>
              {Object.entries(body).map(([type, media]) => (
                <details key={type} open>
                  <summary className="cursor-pointer font-mono text-xs text-slate-600">{type}</summary>
                  <Json value={media.schema} />
                </details>
              ))}
            </div>
          )}
          {op.responses && (
            <div>
              <h4 className="mb-1 text-xs font-semibold uppercase tracking-wide text-slate-400">Responses</h4>
              <ul className="space-y-1">
                {Object.entries(op.responses).map(([code, res]) => (
                  <li key={code}>
                    <details>
                      <summary className="cursor-pointer">
                        <span className={cx("font-mono font-semibold", code.startsWith("2") ? "text-emerald-700" : "text-red-700")}>{code}</span>{" "}
                        <span className="text-slate-600">{res.description}</span>
                      </summary>
                      {res.content ? <Json value={res.content} /> : null}
                    </details>
                  </li>
                ))}
              </ul>
            </div>
          )}
        </div>
      )}
    </div>
  );
}

function Json({ value }: { value: unknown }) {
  return <pre className="mt-1 max-h-96 overflow-auto rounded-lg bg-slate-900 p-3 font-mono text-xs text-slate-100">{JSON.stringify(value, null, 2)}</pre>;
}
