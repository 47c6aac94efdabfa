"use client";
import { useState } from "react";
import { ApiError } from "@/lib/client/api";
import { useMailbox } from "@/lib/client/hooks";
import type { MailboxMessage } from "@/lib/client/types";
import { Badge, Card, EmptyState, ErrorAlert, Input, PageHeader, PageSpinner, cx, timeAgo } from "@/components/ui";
import { PageContainer } from "@/components/shell/app-shell";

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function MailboxPage() {
  const [to, setTo] = useState("");
  // A whole address goes to the API's exact `?to=` filter; anything shorter filters the newest emails here.
  const needle = to.trim().toLowerCase();
  const exact = EMAIL.test(needle) ? needle : undefined;
  const { data, error, isPending } = useMailbox(exact);
  const [openId, setOpenId] = useState<string | null>(null);
  const items = (data?.items ?? []).filter((m) => exact || !needle || `${m.to} ${m.subject}`.toLowerCase().includes(needle));
  const open = items.find((m) => m.id === openId) ?? items[0] ?? null;
  const inactive = error instanceof ApiError && error.status === 404;

  return (
    <PageContainer wide>
      <PageHeader
        title="Local mailbox"
        description="Without a Resend key, Flowmail keeps every email here instead of sending it: verification codes and workflow emails alike. Anyone who can reach this server can read them all, sign-up codes included: use it for development or a private demo, never on a server on the internet (in production it serves only with MAILBOX_ENABLED=true)."
        actions={
          // Input fills its box (w-full): the box sets the width, wide enough for a long address.
          <div className="w-80 max-w-full">
            <Input placeholder="Filter by recipient or subject…" value={to} onChange={(e) => setTo(e.target.value)} data-testid="mailbox-filter" />
          </div>
        }
      />
      {inactive ? (
        <EmptyState title="The local mailbox is off" description="This server sends real email through Resend, so nothing is kept here." />
      ) : error ? (
        <ErrorAlert error={error} />
      ) : isPending ? (
        <PageSpinner />
      ) : items.length === 0 ? (
        <EmptyState testId="mailbox-empty" title="No emails yet" description="Register an account or run a workflow with an OUTPUT node — the emails appear here within a few seconds." />
      ) : (
        <div className="grid grid-cols-1 gap-4 lg:grid-cols-[22rem_minmax(0,1fr)]">
          <Card className="max-h-[70vh] overflow-auto">
            <ul className="divide-y divide-slate-100" data-testid="mailbox-list">
              {items.map((m) => (
                <li key={m.id}>
                  <button
                    onClick={() => setOpenId(m.id)}
                    data-testid="mailbox-item"
                    data-to={m.to}
                    className={cx("w-full px-4 py-3 text-left", open?.id === m.id ? "bg-brand-50" : "hover:bg-slate-50")}
                  >
                    <div className="flex items-center justify-between gap-2">
                      <p className="truncate text-sm font-medium text-slate-900" data-testid="mailbox-item-to">{m.to}</p>
                      <span className="shrink-0 text-xs text-slate-400">{timeAgo(m.createdAt)}</span>
                    </div>
                    <p className="truncate text-sm text-slate-600" data-testid="mailbox-item-subject">{m.subject}</p>
                  </button>
                </li>
              ))}
            </ul>
          </Card>
          {open && <MessageView message={open} />}
        </div>
      )}
    </PageContainer>
  );
}

function MessageView({ message }: { message: MailboxMessage }) {
  return (
    <Card className="p-6" data-testid="mailbox-message">
      <div className="mb-4 border-b border-slate-100 pb-4">
        <h2 className="text-lg font-semibold text-slate-900" data-testid="mailbox-subject">{message.subject}</h2>
        <dl className="mt-2 grid grid-cols-[4rem_1fr] gap-y-1 text-sm">
          <dt className="text-slate-500">From</dt>
          <dd className="text-slate-800">{message.from}</dd>
          <dt className="text-slate-500">To</dt>
          <dd className="text-slate-800">{message.to}</dd>
          {/^<https?:\/\/[^>]+>$/.test(message.headers?.["List-Unsubscribe"] ?? "") && (
            // RFC 8058: what a mail client's "Unsubscribe" button uses (the link opens the confirmation page).
            <>
              <dt className="text-slate-500">Unsub.</dt>
              <dd><a href={message.headers!["List-Unsubscribe"].slice(1, -1)} target="_blank" rel="noreferrer" className="text-brand-700 hover:underline" data-testid="mailbox-unsubscribe">Unsubscribe</a></dd>
            </>
          )}
        </dl>
        <Badge className="mt-2">{message.kind}</Badge>
      </div>
      {message.html ? (
        // The HTML of an email is untrusted content: it renders in a sandbox without scripts.
        <>
          <iframe title="Email body" sandbox="" srcDoc={message.html} className="h-80 w-full rounded-lg ring-1 ring-slate-200" data-testid="mailbox-html" />
          {message.text && (
            <details className="mt-3">
              <summary className="cursor-pointer text-xs font-medium text-slate-500">Plain-text version</summary>
              <pre className="mt-2 whitespace-pre-wrap font-sans text-sm text-slate-800" data-testid="mailbox-text">{message.text}</pre>
            </details>
          )}
        </>
      ) : (
        <pre className="whitespace-pre-wrap font-sans text-sm text-slate-800" data-testid="mailbox-text">
          {message.text}
        </pre>
      )}
    </Card>
  );
}
