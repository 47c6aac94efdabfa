"use client";
import { useQueryClient } from "@tanstack/react-query";
import { useSearchParams } from "next/navigation";
import { useState } from "react";
import { ApiError, api } from "@/lib/client/api";
import { keys, useGoogleStatus, useWebhooks } from "@/lib/client/hooks";
import type { Webhook } from "@/lib/client/types";
import { Alert, Badge, Button, Card, CardHeader, ErrorAlert, Field, Input, timeAgo } from "@/components/ui";

export function GoogleSection() {
  const status = useGoogleStatus();
  const params = useSearchParams();
  const queryClient = useQueryClient();
  const [error, setError] = useState<unknown>(null);
  const notConfigured =
    (status.data?.connected === false && status.data.configured === false) || (status.error instanceof ApiError && status.error.code === "google_not_configured");
  const outcome = params.get("google");

  async function disconnect() {
    setError(null);
    try {
      await api.del("/api/integrations/google");
      await queryClient.invalidateQueries({ queryKey: keys.google });
    } catch (e) {
      setError(e);
    }
  }

  return (
    <Card>
      <CardHeader title="Google Drive" description="Read CSV files and Google Sheets from your Drive in DATA_SOURCE nodes (read-only access)." />
      <div className="space-y-4 p-5" data-testid="google-section">
        {outcome === "connected" && <Alert tone="green">Google account connected.</Alert>}
        {outcome === "error" && <Alert>The Google connection did not complete. Try again.</Alert>}
        <ErrorAlert error={error} />
        {notConfigured ? (
          <p className="text-sm text-slate-500">This server has no Google OAuth client (GOOGLE_CLIENT_ID / GOOGLE_CLIENT_SECRET), so Drive is not available.</p>
        ) : status.error ? (
          <ErrorAlert error={status.error} />
        ) : status.data?.connected ? (
          <div className="flex items-center justify-between">
            <p className="text-sm text-slate-700">
              Connected as <span className="font-medium" data-testid="google-email">{status.data.email}</span>
              {status.data.connectedAt && <span className="text-slate-400"> · {timeAgo(status.data.connectedAt)}</span>}
            </p>
            <Button variant="danger" size="sm" onClick={() => void disconnect()} data-testid="google-disconnect">Disconnect</Button>
          </div>
        ) : (
          <div className="flex items-center justify-between">
            <p className="text-sm text-slate-500">Not connected.</p>
            {/* A full navigation: the connect endpoint answers with a redirect to Google's consent page. */}
            <a href="/api/integrations/google/connect" className="inline-flex h-8 items-center rounded-lg bg-brand-600 px-3 text-sm font-medium text-white hover:bg-brand-700" data-testid="google-connect">
              Connect Google
            </a>
          </div>
        )}
      </div>
    </Card>
  );
}

const EVENTS = ["run.succeeded", "run.failed"];

export function WebhooksSection() {
  const hooks = useWebhooks();
  const queryClient = useQueryClient();
  const [url, setUrl] = useState("");
  const [events, setEvents] = useState<string[]>(EVENTS);
  const [error, setError] = useState<unknown>(null);
  const [created, setCreated] = useState<Webhook | null>(null);
  const [busy, setBusy] = useState(false);

  async function create(e: React.FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      setCreated(await api.post<Webhook>("/api/webhooks", { url, events }));
      setUrl("");
      await queryClient.invalidateQueries({ queryKey: keys.webhooks });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  async function remove(id: string) {
    setError(null);
    try {
      await api.del(`/api/webhooks/${id}`);
      await queryClient.invalidateQueries({ queryKey: keys.webhooks });
    } catch (err) {
      setError(err);
    }
  }

  const items = hooks.data?.items ?? [];
  return (
    <Card>
      <CardHeader title="Webhooks" description="Flowmail POSTs a signed Standard Webhooks message when a run succeeds or fails." />
      <div className="space-y-4 p-5" data-testid="webhooks-section">
        {created?.secret && (
          <Alert tone="amber" title="Copy the signing secret now — it is shown only once" testId="webhook-secret">
            <code className="mt-1 block break-all rounded bg-white/70 px-2 py-1 font-mono text-xs">{created.secret}</code>
          </Alert>
        )}
        <ErrorAlert error={error ?? hooks.error} hideFieldErrors />
        <form onSubmit={create} className="space-y-3">
          <Field label="Endpoint URL" error={error instanceof ApiError ? error.fieldError("url") : undefined}>
            {(id) => <Input id={id} value={url} onChange={(e) => setUrl(e.target.value)} placeholder="https://example.com/hooks/flowmail" data-testid="webhook-url" />}
          </Field>
          <div className="flex flex-wrap items-center gap-x-4 gap-y-2 text-sm">
            {EVENTS.map((ev) => (
              <label key={ev} className="flex items-center gap-1.5">
                <input type="checkbox" checked={events.includes(ev)} onChange={(e) => setEvents(e.target.checked ? [...events, ev] : events.filter((x) => x !== ev))} className="rounded border-slate-300 text-brand-600" />
                <span className="font-mono text-xs">{ev}</span>
              </label>
            ))}
            <Button type="submit" size="sm" className="ml-auto" loading={busy} disabled={!url || events.length === 0} data-testid="webhook-create">
              Add webhook
            </Button>
          </div>
        </form>
        {items.length === 0 ? (
          <p className="text-sm text-slate-500">No webhooks yet.</p>
        ) : (
          <ul className="divide-y divide-slate-100 rounded-lg ring-1 ring-slate-200" data-testid="webhook-list">
            {items.map((h) => (
              <li key={h.id} className="flex items-center justify-between gap-3 px-3 py-2">
                <div className="min-w-0">
                  <p className="truncate font-mono text-sm text-slate-800">{h.url}</p>
                  <p className="mt-0.5 flex gap-1">
                    {h.events.map((ev) => <Badge key={ev}>{ev}</Badge>)}
                    <span className="text-xs text-slate-400">{timeAgo(h.createdAt)}</span>
                  </p>
                </div>
                <Button variant="ghost" size="sm" onClick={() => void remove(h.id)}>Delete</Button>
              </li>
            ))}
          </ul>
        )}
      </div>
    </Card>
  );
}
