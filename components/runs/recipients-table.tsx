"use client";
// The recipients of an OUTPUT node: every email with its status, filterable by
// status, paged from the server (a node may hold 100,000), refreshed while the run is running.
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { Button, cx, formatCount } from "@/components/ui";
import { errorMessage } from "@/lib/client/api";
import { EMAIL_STATUSES, fetchRunEmails, type EmailStatus, type RunEmail } from "@/lib/client/sending";
import { resendUnknown } from "@/lib/client/senders";

const PAGE = 50;

const TONE: Record<EmailStatus, string> = {
  sent: "bg-emerald-100 text-emerald-800",
  pending: "bg-slate-100 text-slate-700",
  suppressed: "bg-amber-100 text-amber-800",
  duplicate: "bg-slate-100 text-slate-500",
  failed: "bg-red-100 text-red-800",
  preview: "bg-brand-100 text-brand-800",
  sending: "bg-sky-100 text-sky-800",
  unknown: "bg-orange-100 text-orange-800",
};

export function RecipientsTable({ runId, nodeId, live }: { runId: string; nodeId: string; live?: boolean }) {
  const [status, setStatus] = useState<EmailStatus | undefined>(undefined);
  const [offset, setOffset] = useState(0);
  const [open, setOpen] = useState<number | null>(null);
  const query = useQuery({
    // `live` in the key: the run finishing fetches once more, so the final statuses replace the last running page.
    queryKey: ["runs", runId, "emails", nodeId, status ?? "", offset, Boolean(live)],
    queryFn: () => fetchRunEmails(runId, nodeId, { status, offset, limit: PAGE }),
    refetchInterval: live ? 2000 : false,
  });
  const data = query.data;
  const pick = (next: EmailStatus | undefined) => {
    setStatus(next);
    setOffset(0);
  };
  const all = data ? Object.values(data.counts).reduce((a, b) => a + b, 0) : 0;
  return (
    <div className="space-y-3" data-testid="recipients">
      <div className="flex flex-wrap gap-1.5" role="tablist" aria-label="Filter by status">
        <FilterChip active={!status} onClick={() => pick(undefined)} label="All" count={all} testId="recipients-filter-all" />
        {EMAIL_STATUSES.filter((s) => (data?.counts[s] ?? 0) > 0 || s === status).map((s) => (
          <FilterChip key={s} active={status === s} onClick={() => pick(s)} label={s} count={data?.counts[s] ?? 0} testId={`recipients-filter-${s}`} />
        ))}
      </div>
      {query.error ? <p className="text-sm text-red-700">{errorMessage(query.error)}</p> : null}
      {!live && (data?.counts.unknown ?? 0) > 0 && <ResendUnknown runId={runId} count={data!.counts.unknown} />}
      <div className="overflow-x-auto rounded-lg ring-1 ring-slate-200">
        <table className="min-w-full text-left text-sm" data-testid="recipients-table">
          <thead className="bg-slate-50 text-[11px] uppercase tracking-wide text-slate-500">
            <tr>
              <th className="px-3 py-2">#</th>
              <th className="px-3 py-2">To</th>
              <th className="px-3 py-2">Subject</th>
              <th className="px-3 py-2">Status</th>
              <th className="px-3 py-2">Sent</th>
            </tr>
          </thead>
          <tbody className="divide-y divide-slate-100">
            {data?.items.map((e) => (
              <RecipientRow key={e.index} email={e} open={open === e.index} onToggle={() => setOpen(open === e.index ? null : e.index)} />
            ))}
            {data && data.items.length === 0 && (
              <tr>
                <td colSpan={5} className="px-3 py-4 text-center text-slate-500">No emails{status ? ` with status ${status}` : ""} yet.</td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
      {data && (
        <div className="flex items-center justify-between text-xs text-slate-500">
          <span data-testid="recipients-range">
            {data.total === 0 ? "0" : `${formatCount(offset + 1)}–${formatCount(offset + data.items.length)}`} of {formatCount(data.total)}
          </span>
          <span className="flex gap-1.5">
            <Button size="sm" variant="secondary" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))} data-testid="recipients-prev">
              Previous
            </Button>
            <Button size="sm" variant="secondary" disabled={data.nextOffset === null} onClick={() => data.nextOffset !== null && setOffset(data.nextOffset)} data-testid="recipients-next">
              Next
            </Button>
          </span>
        </div>
      )}
    </div>
  );
}

/** Emails whose fate a crash left unknown are never sent again on their own: a person may choose to resend them. */
function ResendUnknown({ runId, count }: { runId: string; count: number }) {
  const [state, setState] = useState<{ busy?: boolean; runId?: string; error?: unknown }>({});
  return (
    <div className="flex flex-wrap items-center gap-2 rounded-lg bg-orange-50 px-3 py-2 text-sm text-orange-900" data-testid="recipients-unknown">
      <span>
        {formatCount(count)} email{count === 1 ? "" : "s"} may or may not have been delivered (the run stopped while {count === 1 ? "it was" : "they were"} being sent).
      </span>
      {state.runId ? (
        <Link href={`/runs/${state.runId}`} className="font-medium text-brand-700 hover:underline" data-testid="recipients-resend-run">Resend run started →</Link>
      ) : (
        <Button
          size="sm"
          variant="secondary"
          loading={state.busy}
          onClick={async () => {
            setState({ busy: true });
            try {
              setState({ runId: (await resendUnknown(runId)).runId });
            } catch (error) {
              setState({ error });
            }
          }}
          data-testid="recipients-resend-unknown"
        >
          Resend them
        </Button>
      )}
      {state.error ? <span className="text-red-700">{errorMessage(state.error)}</span> : null}
    </div>
  );
}

function FilterChip(props: { active: boolean; onClick: () => void; label: string; count: number; testId: string }) {
  return (
    <button
      type="button"
      role="tab"
      aria-selected={props.active}
      onClick={props.onClick}
      data-testid={props.testId}
      className={cx("rounded-full px-2.5 py-1 text-xs font-medium ring-1", props.active ? "bg-brand-600 text-white ring-brand-600" : "bg-white text-slate-700 ring-slate-200 hover:bg-slate-50")}
    >
      {props.label} <span className="opacity-70">{formatCount(props.count)}</span>
    </button>
  );
}

function RecipientRow({ email, open, onToggle }: { email: RunEmail; open: boolean; onToggle: () => void }) {
  return (
    <>
      <tr data-testid="recipient-row" data-status={email.status}>
        <td className="px-3 py-1.5 font-mono text-xs text-slate-400">{email.index}</td>
        <td className="px-3 py-1.5 font-mono text-xs text-slate-900">{email.to}</td>
        <td className="max-w-xs truncate px-3 py-1.5 text-slate-700" title={email.subject}>
          {email.body !== undefined ? (
            <button type="button" className="text-left text-brand-700 hover:underline" onClick={onToggle}>
              {email.subject}
            </button>
          ) : (
            email.subject
          )}
        </td>
        <td className="px-3 py-1.5">
          <span className={cx("rounded-full px-2 py-0.5 text-[11px] font-semibold", TONE[email.status])} title={email.error ?? undefined}>
            {email.status}
          </span>
          {email.error && (email.status === "failed" || email.status === "unknown") && (
            <p className="mt-0.5 max-w-sm text-[11px] text-slate-500" data-testid="recipient-error">{email.error}</p>
          )}
        </td>
        <td className="px-3 py-1.5 text-xs text-slate-500">{email.sentAt ? new Date(email.sentAt).toLocaleTimeString() : ""}</td>
      </tr>
      {open && email.body !== undefined && (
        <tr>
          <td colSpan={5} className="bg-slate-50 px-3 py-2">
            <EmailBody body={email.body} format={email.format} />
          </td>
        </tr>
      )}
    </>
  );
}

/** A rendered body as the recipient sees it: HTML in a sandboxed frame (no scripts, no same-origin), text as text. */
export function EmailBody({ body, format, testId }: { body: string; format?: "text" | "html"; testId?: string }) {
  if (format === "html") {
    return <iframe title="Email body" sandbox="" srcDoc={body} className="h-48 w-full rounded bg-white ring-1 ring-slate-200" data-testid={testId} />;
  }
  return (
    <pre className="max-h-48 overflow-auto whitespace-pre-wrap [overflow-wrap:anywhere] rounded bg-white p-2 font-sans text-sm text-slate-800 ring-1 ring-slate-200" data-testid={testId}>
      {body}
    </pre>
  );
}
