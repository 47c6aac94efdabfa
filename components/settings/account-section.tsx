"use client";
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { ApiError, api } from "@/lib/client/api";
import { keys, useAccount } from "@/lib/client/hooks";
import type { Account } from "@/lib/client/types";
import { Alert, Button, Card, CardHeader, ErrorAlert, Field, Input, Select } from "@/components/ui";

export function AccountSection() {
  const { data: account, error } = useAccount();
  const queryClient = useQueryClient();
  const [fullName, setFullName] = useState(account?.fullName ?? "");
  const [saveError, setSaveError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  // Each new copy of the account (loaded, refetched, saved) resets the field to the stored name,
  // adjusted during render rather than in an effect.
  const [shownAccount, setShownAccount] = useState(account);
  if (account !== shownAccount) {
    setShownAccount(account);
    if (account) setFullName(account.fullName);
  }

  async function save(e: React.FormEvent) {
    e.preventDefault();
    setBusy(true);
    setSaveError(null);
    setSaved(false);
    try {
      queryClient.setQueryData(keys.account, await api.patch<Account>("/api/account", { fullName }));
      setSaved(true);
    } catch (err) {
      setSaveError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <Card>
      <CardHeader title="Account" description={account ? <>Signed in as <span className="font-medium text-slate-700" data-testid="account-email">{account.email}</span></> : undefined} />
      <form onSubmit={save} className="space-y-4 p-5">
        <ErrorAlert error={error} />
        <Field label="Full name" hint="Used to greet you in emails." error={saveError instanceof ApiError ? saveError.fieldError("fullName") : undefined}>
          {(id) => <Input id={id} value={fullName} onChange={(e) => setFullName(e.target.value)} data-testid="account-name" />}
        </Field>
        {saveError && !(saveError instanceof ApiError && saveError.fieldError("fullName")) ? <ErrorAlert error={saveError} /> : null}
        {saved && <Alert tone="green">Saved.</Alert>}
        <Button type="submit" loading={busy} disabled={!account || fullName === account.fullName} data-testid="account-save">
          Save name
        </Button>
      </form>
    </Card>
  );
}

const PROVIDERS = [
  { value: "openai", label: "OpenAI" },
  { value: "anthropic", label: "Anthropic" },
  { value: "openai-compatible", label: "OpenAI-compatible (Ollama, vLLM…)" },
];

interface AiForm {
  provider: string;
  apiKey: string;
  model: string;
  baseUrl: string;
}
const BLANK_AI_FORM: AiForm = { provider: "openai", apiKey: "", model: "", baseUrl: "" };
const fromCurrent = (form: AiForm, current: NonNullable<Account["ai"]>): AiForm => ({
  ...form,
  provider: current.provider,
  model: current.model ?? "",
  baseUrl: current.baseUrl ?? "",
});

export function AiProviderSection() {
  const { data: account } = useAccount();
  const queryClient = useQueryClient();
  const current = account?.ai ?? null;
  const [form, setForm] = useState<AiForm>(() => (current ? fromCurrent(BLANK_AI_FORM, current) : BLANK_AI_FORM));
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  // A newly stored provider (loaded, saved, refetched) refills the form, keeping a key being typed;
  // adjusted during render rather than in an effect.
  const [shownCurrent, setShownCurrent] = useState(current);
  if (current !== shownCurrent) {
    setShownCurrent(current);
    if (current) setForm((f) => fromCurrent(f, current));
  }
  const fieldError = (name: string) => (error instanceof ApiError ? error.fieldError(name) : undefined);

  async function save(e: React.FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const body: Record<string, string> = { provider: form.provider, apiKey: form.apiKey };
      if (form.model.trim()) body.model = form.model.trim();
      if (form.baseUrl.trim()) body.baseUrl = form.baseUrl.trim();
      await api.put("/api/account/ai-provider", body);
      setForm((f) => ({ ...f, apiKey: "" }));
      await queryClient.invalidateQueries({ queryKey: keys.account });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  async function remove() {
    setError(null);
    try {
      await api.del("/api/account/ai-provider");
      await queryClient.invalidateQueries({ queryKey: keys.account });
    } catch (err) {
      setError(err);
    }
  }

  const set = (name: keyof typeof form) => (e: React.ChangeEvent<HTMLInputElement | HTMLSelectElement>) => setForm({ ...form, [name]: e.target.value });
  return (
    <Card>
      <CardHeader
        title="AI provider"
        description="AI nodes call this provider with your key. The key is encrypted at rest; only its last 4 characters are ever shown."
        actions={current && <Button variant="danger" size="sm" onClick={() => void remove()} data-testid="ai-remove">Remove key</Button>}
      />
      <form onSubmit={save} className="space-y-4 p-5">
        {current ? (
          <Alert tone="green" testId="ai-current">
            {PROVIDERS.find((p) => p.value === current.provider)?.label ?? current.provider} key ending in <span className="font-mono font-semibold">{current.keyLast4}</span>
            {current.model ? <> · model <span className="font-mono">{current.model}</span></> : null}
          </Alert>
        ) : (
          <p className="text-sm text-slate-500">No key yet: AI nodes fail with “AI provider key not configured” until you add one.</p>
        )}
        <ErrorAlert error={error} hideFieldErrors />
        <div className="grid gap-4 sm:grid-cols-2">
          <Field label="Provider" error={fieldError("provider")}>
            {(id) => (
              <Select id={id} value={form.provider} onChange={set("provider")} data-testid="ai-provider">
                {PROVIDERS.map((p) => (
                  <option key={p.value} value={p.value}>{p.label}</option>
                ))}
              </Select>
            )}
          </Field>
          <Field label="Model" hint="Optional; the provider's default otherwise." error={fieldError("model")}>
            {(id) => <Input id={id} value={form.model} onChange={set("model")} placeholder="gpt-4o-mini" data-testid="ai-model" />}
          </Field>
        </div>
        <Field label="API key" error={fieldError("apiKey")}>
          {(id) => <Input id={id} type="password" value={form.apiKey} onChange={set("apiKey")} placeholder={current ? "Enter a new key to replace it" : "sk-…"} autoComplete="off" data-testid="ai-key" />}
        </Field>
        {form.provider === "openai-compatible" && (
          <Field label="Base URL" hint="The OpenAI-style API root, e.g. http://localhost:11434/v1" error={fieldError("baseUrl")}>
            {(id) => <Input id={id} value={form.baseUrl} onChange={set("baseUrl")} data-testid="ai-base-url" />}
          </Field>
        )}
        <Button type="submit" loading={busy} disabled={!form.apiKey} data-testid="ai-save">
          Save provider
        </Button>
      </form>
    </Card>
  );
}
