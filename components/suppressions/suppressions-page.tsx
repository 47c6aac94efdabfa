"use client";
// The account's suppression list: addresses no workflow email goes to — unsubscribed, bounced,
// complained, or added here. Search, paste a list to add, remove one.
import { useInfiniteQuery, useMutation, useQueryClient } from "@tanstack/react-query";
import { useDeferredValue, useState } from "react";
import { PageContainer } from "@/components/shell/app-shell";
import { Badge, Button, Card, CardHeader, ErrorAlert, Input, PageHeader, Spinner, Textarea, timeAgo } from "@/components/ui";
import { addSuppressions, fetchSuppressions, removeSuppression } from "@/lib/client/sending";
import { describeLineProblem, parsePastedAddresses } from "./pasted-addresses";

const REASON_TONE = { unsubscribed: "amber", bounced: "red", complained: "red", manual: "grey" } as const;


export function SuppressionsPage() {
  const queryClient = useQueryClient();
  const [search, setSearch] = useState("");
  const q = useDeferredValue(search.trim());
  const [pasted, setPasted] = useState("");
  const [notice, setNotice] = useState<string | null>(null);
  const list = useInfiniteQuery({
    queryKey: ["suppressions", q],
    queryFn: ({ pageParam }) => fetchSuppressions({ q: q || undefined, cursor: pageParam, limit: 50 }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
  });
  const refresh = () => queryClient.invalidateQueries({ queryKey: ["suppressions"] });
  const add = useMutation({
    mutationFn: async (emails: string[]) => {
      let added = 0;
      for (let i = 0; i < emails.length; i += 1000) added += (await addSuppressions(emails.slice(i, i + 1000))).added;
      return added;
    },
    onSuccess: (added, emails) => {
      setNotice(`${added} added${emails.length > added ? `, ${emails.length - added} already on the list` : ""}.`);
      setPasted("");
      void refresh();
    },
  });
  const remove = useMutation({ mutationFn: removeSuppression, onSuccess: () => void refresh() });
  const items = list.data?.pages.flatMap((p) => p.items) ?? [];
  const { addresses, problems } = parsePastedAddresses(pasted);
  return (
    <PageContainer>
      <PageHeader title="Suppressions" description="Workflow emails are never sent to these addresses. Unsubscribes, hard bounces and complaints land here by themselves." />
      <div className="grid grid-cols-1 gap-6 lg:grid-cols-[minmax(0,1fr)_20rem]">
        <Card className="min-w-0">
          <CardHeader title="Suppressed addresses" />
          <div className="space-y-3 p-5">
            <Input placeholder="Search addresses" value={search} onChange={(e) => setSearch(e.target.value)} aria-label="Search addresses" data-testid="suppressions-search" />
            {list.error ? <ErrorAlert error={list.error} /> : null}
            {remove.error ? <ErrorAlert error={remove.error} /> : null}
            {list.isLoading ? (
              <Spinner />
            ) : items.length === 0 ? (
              <p className="text-sm text-slate-500" data-testid="suppressions-empty">{q ? "No address matches." : "No address is suppressed."}</p>
            ) : (
              <ul className="divide-y divide-slate-100 rounded-lg ring-1 ring-slate-200" data-testid="suppressions-list">
                {items.map((s) => (
                  <li key={s.email} className="flex items-center justify-between gap-2 px-3 py-2" data-testid="suppression-row">
                    <span className="min-w-0">
                      <span className="block truncate font-mono text-sm text-slate-900">{s.email}</span>
                      <span className="text-xs text-slate-500">{timeAgo(s.createdAt)}</span>
                    </span>
                    <span className="flex shrink-0 items-center gap-2">
                      <Badge tone={REASON_TONE[s.reason]} data-testid="suppression-reason">{s.reason}</Badge>
                      <Button size="sm" variant="ghost" onClick={() => remove.mutate(s.email)} aria-label={`Remove ${s.email}`} data-testid="suppression-remove">
                        Remove
                      </Button>
                    </span>
                  </li>
                ))}
              </ul>
            )}
            {list.hasNextPage && (
              <Button variant="secondary" size="sm" onClick={() => void list.fetchNextPage()} loading={list.isFetchingNextPage}>
                Show more
              </Button>
            )}
          </div>
        </Card>
        <Card>
          <CardHeader title="Add addresses" description="Paste one per line (or separated by commas)." />
          <form
            className="space-y-3 p-5"
            onSubmit={(e) => {
              e.preventDefault();
              setNotice(null);
              if (addresses.length && problems.length === 0) add.mutate(addresses);
            }}
          >
            <Textarea rows={6} value={pasted} onChange={(e) => setPasted(e.target.value)} placeholder={"ann@example.com\nbob@example.com"} aria-label="Addresses to suppress" data-testid="suppressions-paste" />
            {problems.length > 0 && (
              <div role="alert" className="rounded-lg bg-red-50 p-3 text-sm text-red-800 ring-1 ring-red-200" data-testid="suppressions-problems">
                <p className="font-medium">
                  {problems.length === 1 ? "One line is not an email address" : `${problems.length} pieces are not email addresses`}: fix or remove {problems.length === 1 ? "it" : "them"} to add the list.
                </p>
                <ul className="mt-1 list-disc space-y-0.5 pl-5 break-all">
                  {problems.slice(0, 5).map((problem, i) => (
                    <li key={i} data-testid="suppressions-problem">
                      {describeLineProblem(problem)}
                    </li>
                  ))}
                </ul>
                {problems.length > 5 && <p className="mt-1">…and {problems.length - 5} more.</p>}
              </div>
            )}
            {add.error ? <ErrorAlert error={add.error} /> : null}
            {notice && <p className="text-sm text-emerald-700" data-testid="suppressions-notice">{notice}</p>}
            <Button type="submit" size="sm" disabled={addresses.length === 0 || problems.length > 0} loading={add.isPending} data-testid="suppressions-add">
              Add {addresses.length || ""} {addresses.length === 1 ? "address" : "addresses"}
            </Button>
          </form>
        </Card>
      </div>
    </PageContainer>
  );
}
