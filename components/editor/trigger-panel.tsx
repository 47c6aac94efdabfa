"use client";
// The TRIGGER node's panel: the three ways a workflow starts — manual/API, a schedule, inbound hooks.
// The schedule and the hooks are workflow settings saved at once through their own endpoints, not with the graph.
import Link from "next/link";
import { useParams } from "next/navigation";
import { useMemo, useState } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, errorMessage } from "@/lib/client/api";
import { useWorkflow } from "@/lib/client/hooks";
import { describeSchedule, nextSlots, scheduleProblems, type Schedule } from "@/lib/schedules/schedule-rules";
import { Button, Field, Input, cx, timeAgo } from "@/components/ui";

type HookDelivery = { status: number; runId: string | null; code: string | null; idempotencyKey: string | null; sizeBytes: number; receivedAt: string };
type Hook = { id: string; workflowId: string; createdAt: string; lastDeliveries: HookDelivery[] };
type SavedSchedule = { schedule: Schedule | null; nextRunAt: string | null };

const hooksKey = (workflowId: string) => ["workflows", workflowId, "hooks"] as const;

export function TriggerPanel({ nodeId }: { nodeId: string }) {
  const params = useParams<{ id?: string }>();
  const workflowId = params?.id?.startsWith("wf_") ? params.id : null;
  if (!workflowId) {
    return <p className="text-sm text-slate-600" data-testid="trigger-unsaved">Every run starts here. Save the workflow to run it from the API, on a schedule or from an inbound hook.</p>;
  }
  return (
    <div className="space-y-5" data-testid="trigger-panel">
      <ManualSection workflowId={workflowId} />
      <ScheduleSection workflowId={workflowId} />
      <HooksSection workflowId={workflowId} nodeId={nodeId} />
    </div>
  );
}

function Section({ title, children, testId }: { title: string; children: React.ReactNode; testId: string }) {
  return (
    <section className="space-y-2 border-t border-slate-200 pt-4" data-testid={testId}>
      <h3 className="text-sm font-semibold text-slate-900">{title}</h3>
      {children}
    </section>
  );
}

function CopyLine({ text, testId }: { text: string; testId: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div className="flex items-start gap-2">
      <code className="block min-w-0 flex-1 break-all rounded bg-slate-100 px-2 py-1.5 font-mono text-[11px] text-slate-800" data-testid={testId}>
        {text}
      </code>
      <Button
        size="sm"
        variant="secondary"
        data-testid={`${testId}-copy`}
        onClick={() => void navigator.clipboard?.writeText(text).then(() => setCopied(true), () => setCopied(false))}
      >
        {copied ? "Copied" : "Copy"}
      </Button>
    </div>
  );
}

function ManualSection({ workflowId }: { workflowId: string }) {
  const origin = typeof window === "undefined" ? "" : window.location.origin;
  return (
    <Section title="Manual or API" testId="trigger-manual">
      <p className="text-xs text-slate-600">Press Run in the toolbar, or start a run from a script (an access token from POST /api/auth/login):</p>
      <CopyLine testId="trigger-curl" text={`curl -X POST ${origin}/api/workflows/${workflowId}/run -H "Authorization: Bearer $TOKEN" -H "Idempotency-Key: $(uuidgen)"`} />
    </Section>
  );
}

/** Times in the schedule's own zone, e.g. "Wed 25 Nov, 09:00". */
function formatSlot(date: Date, timeZone: string): string {
  try {
    return new Intl.DateTimeFormat("en-GB", { timeZone, weekday: "short", day: "numeric", month: "short", hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).format(date);
  } catch {
    return date.toISOString();
  }
}

function ScheduleSection({ workflowId }: { workflowId: string }) {
  const workflow = useWorkflow(workflowId);
  const loaded = workflow.data as (SavedSchedule & { id: string }) | undefined;
  const [saved, setSaved] = useState<SavedSchedule | null>(null);
  // Memoized: the seeding below compares by identity, so a fresh object per render would loop.
  const fromServer = useMemo(() => (loaded ? { schedule: loaded.schedule ?? null, nextRunAt: loaded.nextRunAt ?? null } : null), [loaded]);
  const current = saved ?? fromServer;
  const [draft, setDraft] = useState<Schedule | null>(null);
  const [seededFrom, setSeededFrom] = useState<SavedSchedule | null>(null);
  if (current && current !== seededFrom) {
    setSeededFrom(current);
    setDraft(current.schedule ?? { cron: "0 9 * * 1-5", timezone: "UTC", enabled: true });
  }
  const problems = useMemo(() => (draft ? scheduleProblems(draft) : []), [draft]);
  const preview = useMemo(() => {
    if (!draft || problems.length > 0) return null;
    return { reading: describeSchedule(draft), next: nextSlots(draft, new Date(), 3).map((d) => formatSlot(d, draft.timezone)) };
  }, [draft, problems]);
  const save = useMutation({
    mutationFn: (schedule: Schedule | null) => api.patch<SavedSchedule>(`/api/workflows/${workflowId}`, { schedule }),
    onSuccess: (result) => setSaved({ schedule: result.schedule, nextRunAt: result.nextRunAt }),
  });
  if (!draft) return <Section title="Schedule" testId="trigger-schedule"><p className="text-xs text-slate-500">Loading…</p></Section>;
  const set = (change: Partial<Schedule>) => setDraft({ ...draft, ...change });
  const problemFor = (path: string) => problems.find((p) => p.path === path)?.message;
  return (
    <Section title="Schedule" testId="trigger-schedule">
      <Field label="Cron (minute hour day month weekday)" error={problemFor("schedule.cron")} testId="schedule-cron" hint='e.g. "0 9 * * 1-5": 09:00 every weekday'>
        {(id) => <Input id={id} value={draft.cron} onChange={(e) => set({ cron: e.target.value })} invalid={!!problemFor("schedule.cron")} data-testid="schedule-cron" className="font-mono" />}
      </Field>
      <Field label="Time zone" error={problemFor("schedule.timezone")} testId="schedule-timezone">
        {(id) => <Input id={id} value={draft.timezone} onChange={(e) => set({ timezone: e.target.value })} list="trigger-time-zones" data-testid="schedule-timezone" />}
      </Field>
      <TimeZoneList />
      <label className="flex items-center gap-2 text-sm text-slate-700">
        <input type="checkbox" checked={draft.enabled} onChange={(e) => set({ enabled: e.target.checked })} data-testid="schedule-enabled" />
        Enabled
      </label>
      {preview && (
        <div className="rounded-lg bg-slate-50 px-3 py-2 text-xs text-slate-700">
          <p className="font-medium" data-testid="schedule-reading">{preview.reading}</p>
          <p className="mt-1 text-slate-500">Next times:</p>
          <ul className="list-disc pl-5" data-testid="schedule-next">
            {preview.next.map((t) => <li key={t}>{t}</li>)}
          </ul>
        </div>
      )}
      <div className="flex items-center gap-2">
        <Button size="sm" onClick={() => save.mutate(draft)} loading={save.isPending} disabled={problems.length > 0} data-testid="schedule-save">Save schedule</Button>
        {current?.schedule && <Button size="sm" variant="ghost" onClick={() => save.mutate(null)} data-testid="schedule-remove">Remove</Button>}
      </div>
      {save.error && <p className="text-xs font-medium text-red-600" data-testid="schedule-error">{errorMessage(save.error)}</p>}
      <p className="text-xs text-slate-500" data-testid="schedule-status">
        {!current?.schedule ? "No schedule saved." : current.nextRunAt ? `Saved. Next run: ${formatSlot(new Date(current.nextRunAt), current.schedule.timezone)} (${current.schedule.timezone}).` : "Saved, disabled: no runs start."}
      </p>
    </Section>
  );
}

function TimeZoneList() {
  const zones = useMemo(() => {
    const intl = Intl as unknown as { supportedValuesOf?: (key: string) => string[] };
    return ["UTC", ...(intl.supportedValuesOf?.("timeZone") ?? [])];
  }, []);
  return <datalist id="trigger-time-zones">{zones.map((z) => <option key={z} value={z} />)}</datalist>;
}

function HooksSection({ workflowId, nodeId }: { workflowId: string; nodeId: string }) {
  const client = useQueryClient();
  const hooks = useQuery({
    queryKey: hooksKey(workflowId),
    queryFn: () => api.get<{ items: Hook[] }>(`/api/workflows/${workflowId}/hooks`),
    refetchInterval: 3000,
  });
  const [createdUrl, setCreatedUrl] = useState<string | null>(null);
  const create = useMutation({
    mutationFn: () => api.postEmpty<{ id: string; url: string }>(`/api/workflows/${workflowId}/hooks`),
    onSuccess: (hook) => {
      setCreatedUrl(hook.url);
      void client.invalidateQueries({ queryKey: hooksKey(workflowId) });
    },
  });
  const revoke = useMutation({
    mutationFn: (hookId: string) => api.del(`/api/workflows/${workflowId}/hooks/${hookId}`),
    // Drop it from the list at once: a list refetch already in flight when the DELETE started would still show it.
    onSuccess: async (_done, hookId) => {
      await client.cancelQueries({ queryKey: hooksKey(workflowId) });
      client.setQueryData<{ items: Hook[] }>(hooksKey(workflowId), (data) => data && { items: data.items.filter((h) => h.id !== hookId) });
    },
  });
  return (
    <Section title="Inbound hook" testId="trigger-hooks">
      <p className="text-xs text-slate-600">
        A URL any service can POST JSON to: each delivery starts a run, and the TRIGGER&apos;s output is <code className="font-mono">{"{ body }"}</code> (use{" "}
        <code className="font-mono">{`{{${nodeId}.body.email}}`}</code>). A repeated <code className="font-mono">webhook-id</code> or{" "}
        <code className="font-mono">Idempotency-Key</code> header starts nothing new.
      </p>
      <Button size="sm" variant="secondary" onClick={() => create.mutate()} loading={create.isPending} data-testid="hook-create">Create hook URL</Button>
      {createdUrl && (
        <div className="space-y-1 rounded-lg border border-amber-200 bg-amber-50 p-2" data-testid="hook-created">
          <p className="text-xs font-medium text-amber-800">Copy this URL now: it holds the hook&apos;s secret and is shown only once.</p>
          <CopyLine testId="hook-url" text={createdUrl} />
          <CopyLine testId="hook-curl" text={`curl -X POST ${createdUrl} -H 'content-type: application/json' -d '{"email":"ann@example.com"}'`} />
        </div>
      )}
      {(create.error || revoke.error) && <p className="text-xs font-medium text-red-600">{errorMessage(create.error ?? revoke.error)}</p>}
      <ul className="space-y-3">
        {hooks.data?.items.map((hook) => (
          <li key={hook.id} className="rounded-lg border border-slate-200 p-2" data-testid="hook-item">
            <div className="flex items-center justify-between gap-2">
              <span className="font-mono text-[11px] text-slate-600">{hook.id}</span>
              <Button size="sm" variant="danger" onClick={() => revoke.mutate(hook.id)} data-testid="hook-revoke">Revoke</Button>
            </div>
            <p className="mt-1 text-xs text-slate-500">Last deliveries</p>
            {hook.lastDeliveries.length === 0 && <p className="text-xs text-slate-400">None yet.</p>}
            <ul className="space-y-0.5">
              {hook.lastDeliveries.map((d, i) => (
                <li key={i} className="flex items-center gap-2 text-xs" data-testid="hook-delivery">
                  <span className={cx("rounded px-1 font-mono", d.status === 202 ? "bg-green-100 text-green-800" : "bg-red-100 text-red-800")}>{d.status}</span>
                  {d.runId ? <Link href={`/runs/${d.runId}`} className="font-mono text-blue-700 underline" data-testid="hook-delivery-run">{d.runId.slice(0, 12)}…</Link> : <span className="text-slate-500">{d.code}</span>}
                  <span className="text-slate-400">{timeAgo(d.receivedAt)}</span>
                </li>
              ))}
            </ul>
          </li>
        ))}
      </ul>
    </Section>
  );
}
