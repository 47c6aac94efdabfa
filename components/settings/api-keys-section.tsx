"use client";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { ApiError, api } from "@/lib/client/api";
import { useWorkflows } from "@/lib/client/hooks";
import { apiKeyScopes, type ApiKeyScope, type ApiKeyView, type CreatedApiKeyView } from "@/lib/schemas/api-keys";
import { Alert, Badge, Button, Card, CardHeader, ErrorAlert, Field, Input, Select, timeAgo } from "@/components/ui";

const apiKeysQueryKey = ["api-keys"] as const;
const EXPIRY_CHOICES = [
  { label: "Never", days: "" },
  { label: "7 days", days: "7" },
  { label: "30 days", days: "30" },
  { label: "90 days", days: "90" },
  { label: "1 year", days: "365" },
];

/** Settings → API keys: create a key (scopes and workflows picked from lists), copy it once, see its last use, revoke it. */
export function ApiKeysSection() {
  const list = useQuery({ queryKey: apiKeysQueryKey, queryFn: () => api.get<{ items: ApiKeyView[] }>("/api/account/api-keys") });
  const queryClient = useQueryClient();
  const [created, setCreated] = useState<CreatedApiKeyView | null>(null);
  const [error, setError] = useState<unknown>(null);

  async function revoke(id: string) {
    setError(null);
    try {
      await api.del(`/api/account/api-keys/${id}`);
      if (created?.id === id) setCreated(null);
      await queryClient.invalidateQueries({ queryKey: apiKeysQueryKey });
    } catch (err) {
      setError(err);
    }
  }

  const items = list.data?.items ?? [];
  return (
    <Card>
      <CardHeader
        title="API keys"
        description="For scripts, CI jobs and agents: send `Authorization: Bearer fmk_…` to the REST API. A key can do only what its scopes allow, and never reaches your account settings."
      />
      <div className="space-y-4 p-5" data-testid="api-keys-section">
        {created && <NewKey created={created} onDone={() => setCreated(null)} />}
        <ErrorAlert error={error ?? list.error} />
        <CreateKeyForm onCreated={async (key) => {
          setCreated(key);
          await queryClient.invalidateQueries({ queryKey: apiKeysQueryKey });
        }} />
        {items.length === 0 ? (
          <p className="text-sm text-slate-500">No API keys yet.</p>
        ) : (
          <ul className="divide-y divide-slate-100 rounded-lg ring-1 ring-slate-200" data-testid="api-key-list">
            {items.map((k) => <KeyRow key={k.id} apiKey={k} listedAt={list.dataUpdatedAt} onRevoke={() => void revoke(k.id)} />)}
          </ul>
        )}
      </div>
    </Card>
  );
}

function NewKey({ created, onDone }: { created: CreatedApiKeyView; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  async function copy() {
    await navigator.clipboard.writeText(created.key);
    setCopied(true);
  }
  return (
    <Alert tone="amber" title={`Copy the key "${created.name}" now — it is shown only once`} testId="api-key-created">
      <code className="mt-1 block break-all rounded bg-white/70 px-2 py-1 font-mono text-xs" data-testid="api-key-secret">{created.key}</code>
      <div className="mt-2 flex gap-2">
        <Button size="sm" onClick={() => void copy()} data-testid="api-key-copy">{copied ? "Copied" : "Copy"}</Button>
        <Button size="sm" variant="ghost" onClick={onDone} data-testid="api-key-done">Done</Button>
      </div>
    </Alert>
  );
}

function CreateKeyForm({ onCreated }: { onCreated: (key: CreatedApiKeyView) => Promise<void> }) {
  const workflows = useWorkflows();
  const [name, setName] = useState("");
  const [scopes, setScopes] = useState<ApiKeyScope[]>(["workflows:read", "runs:read", "runs:write"]);
  const [confined, setConfined] = useState(false);
  const [workflowIds, setWorkflowIds] = useState<string[]>([]);
  const [expiresInDays, setExpiresInDays] = useState("90");
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  async function create(e: React.FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const body = {
        name,
        scopes,
        ...(confined ? { workflowIds } : {}),
        ...(expiresInDays ? { expiresInDays: Number(expiresInDays) } : {}),
      };
      await onCreated(await api.post<CreatedApiKeyView>("/api/account/api-keys", body));
      setName("");
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const toggle = <T,>(list: T[], item: T, on: boolean) => (on ? [...list, item] : list.filter((x) => x !== item));
  const fieldError = (field: string) => (error instanceof ApiError ? error.fieldError(field) : undefined);
  return (
    <form onSubmit={create} className="space-y-3" data-testid="api-key-form">
      <ErrorAlert error={error} hideFieldErrors />
      <Field label="Name" error={fieldError("name")}>
        {(id) => <Input id={id} value={name} onChange={(e) => setName(e.target.value)} placeholder="CI deploy" maxLength={100} data-testid="api-key-name" />}
      </Field>
      <fieldset>
        <legend className="text-sm font-medium text-slate-700">Scopes</legend>
        <div className="mt-1.5 grid grid-cols-2 gap-x-4 gap-y-1 sm:grid-cols-3">
          {apiKeyScopes.map((scope) => (
            <label key={scope} className="flex items-center gap-1.5 text-sm">
              <input type="checkbox" checked={scopes.includes(scope)} onChange={(e) => setScopes(toggle(scopes, scope, e.target.checked))} className="rounded border-slate-300 text-brand-600" data-testid={`api-key-scope-${scope}`} />
              <span className="font-mono text-xs">{scope}</span>
            </label>
          ))}
        </div>
      </fieldset>
      <fieldset>
        <legend className="text-sm font-medium text-slate-700">Workflows</legend>
        <label className="mt-1.5 flex items-center gap-1.5 text-sm">
          <input type="checkbox" checked={confined} onChange={(e) => setConfined(e.target.checked)} className="rounded border-slate-300 text-brand-600" data-testid="api-key-confine" />
          Only these workflows (such a key cannot create workflows)
        </label>
        {confined && (
          <div className="mt-1.5 max-h-40 space-y-1 overflow-y-auto rounded-lg p-2 ring-1 ring-slate-200" data-testid="api-key-workflows">
            {(workflows.data?.items ?? []).map((w) => (
              <label key={w.id} className="flex items-center gap-1.5 text-sm">
                <input type="checkbox" checked={workflowIds.includes(w.id)} onChange={(e) => setWorkflowIds(toggle(workflowIds, w.id, e.target.checked))} className="rounded border-slate-300 text-brand-600" />
                {w.name}
              </label>
            ))}
            {workflows.data?.items.length === 0 && <p className="text-xs text-slate-500">No workflows yet.</p>}
          </div>
        )}
      </fieldset>
      <div className="flex flex-wrap items-end gap-3">
        <Field label="Expires" error={fieldError("expiresInDays")}>
          {(id) => (
            <Select id={id} value={expiresInDays} onChange={(e) => setExpiresInDays(e.target.value)} data-testid="api-key-expiry">
              {EXPIRY_CHOICES.map((c) => <option key={c.label} value={c.days}>{c.label}</option>)}
            </Select>
          )}
        </Field>
        <Button type="submit" size="sm" className="ml-auto" loading={busy} disabled={!name.trim() || scopes.length === 0 || (confined && workflowIds.length === 0)} data-testid="api-key-create">
          Create key
        </Button>
      </div>
    </form>
  );
}

/** `listedAt`: when the list was read, the instant "expired" is judged at. */
function KeyRow({ apiKey: k, listedAt, onRevoke }: { apiKey: ApiKeyView; listedAt: number; onRevoke: () => void }) {
  const expired = k.expiresAt !== null && Date.parse(k.expiresAt) <= listedAt;
  return (
    <li className="flex items-center justify-between gap-3 px-3 py-2" data-testid="api-key-row" data-key-id={k.id}>
      <div className="min-w-0">
        <p className="truncate text-sm text-slate-800">
          <span className="font-medium">{k.name}</span> <span className="font-mono text-xs text-slate-500">{k.prefix}…</span>
          {expired && <Badge tone="red" className="ml-2">expired</Badge>}
        </p>
        <p className="mt-0.5 flex flex-wrap gap-1">
          {k.scopes.map((s) => <Badge key={s}>{s}</Badge>)}
          {k.workflowIds && <Badge tone="amber">{k.workflowIds.length} workflow{k.workflowIds.length === 1 ? "" : "s"}</Badge>}
        </p>
        <p className="mt-0.5 text-xs text-slate-400">
          Created {timeAgo(k.createdAt)} · <span data-testid="api-key-last-used">{k.lastUsedAt ? `last used ${timeAgo(k.lastUsedAt)}` : "never used"}</span>
          {k.expiresAt && !expired && ` · expires ${new Date(k.expiresAt).toLocaleDateString()}`}
        </p>
      </div>
      <Button variant="danger" size="sm" onClick={onRevoke} data-testid="api-key-revoke">Revoke</Button>
    </li>
  );
}
