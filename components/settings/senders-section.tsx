"use client";
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { ApiError } from "@/lib/client/api";
import { createSender, deleteSender, makeDefaultSender, senderKeys, testSender, useSenders, type Sender, type SenderKind } from "@/lib/client/senders";
import { Alert, Badge, Button, Card, CardHeader, ErrorAlert, Field, Input, Select } from "@/components/ui";

const EMPTY = {
  kind: "smtp" as SenderKind,
  name: "",
  from: "",
  replyTo: "",
  ratePerSecond: "",
  apiKey: "",
  host: "",
  port: "587",
  secure: "false",
  username: "",
  password: "",
  region: "",
  accessKeyId: "",
  secretAccessKey: "",
  configurationSet: "",
};

/** The request body for the form: only the settings of the chosen kind, optional fields left out when empty. */
function bodyOf(form: typeof EMPTY): Record<string, unknown> {
  const opt = (value: string) => (value.trim() === "" ? undefined : value.trim());
  const common = {
    kind: form.kind,
    name: form.name,
    from: form.from,
    replyTo: opt(form.replyTo),
    ratePerSecond: opt(form.ratePerSecond) === undefined ? undefined : Number(form.ratePerSecond),
  };
  if (form.kind === "resend") return { ...common, resend: { apiKey: form.apiKey } };
  if (form.kind === "smtp") {
    return { ...common, smtp: { host: form.host, port: Number(form.port), secure: form.secure === "true", username: opt(form.username), password: opt(form.password) } };
  }
  return { ...common, ses: { region: form.region, accessKeyId: form.accessKeyId, secretAccessKey: form.secretAccessKey, configurationSet: opt(form.configurationSet) } };
}

function describeSender(s: Sender): string {
  if (s.smtp) return `SMTP ${s.smtp.host}:${s.smtp.port}${s.smtp.username ? ` as ${s.smtp.username}` : ""}${s.smtp.passwordLast4 ? ` · password …${s.smtp.passwordLast4}` : ""}`;
  if (s.ses) return `Amazon SES ${s.ses.region} · key ${s.ses.accessKeyId} · secret …${s.ses.secretLast4}`;
  return `Resend · key …${s.resend?.keyLast4 ?? ""}`;
}

/** Settings → Senders: the account's own providers for its OUTPUT nodes (add, send a test email, make default, delete). */
export function SendersSection() {
  const senders = useSenders();
  const queryClient = useQueryClient();
  const [form, setForm] = useState(EMPTY);
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const set = (name: keyof typeof EMPTY) => (e: React.ChangeEvent<HTMLInputElement | HTMLSelectElement>) => setForm({ ...form, [name]: e.target.value });
  const fieldError = (path: string) => (error instanceof ApiError ? error.errors.find((x) => x.path === path)?.message : undefined);
  const refresh = () => queryClient.invalidateQueries({ queryKey: senderKeys.all });

  async function act(id: string, what: () => Promise<unknown>, done?: string) {
    setBusy(id);
    setError(null);
    setNotice(null);
    try {
      await what();
      if (done) setNotice(done);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(null);
      await refresh();
    }
  }

  async function add(e: React.FormEvent) {
    e.preventDefault();
    await act("new", async () => {
      await createSender(bodyOf(form));
      setForm({ ...EMPTY, kind: form.kind });
    }, "Sender added.");
  }

  const items = senders.data?.items ?? [];
  return (
    <Card>
      <CardHeader
        title="Senders"
        description="Send your workflows' emails through your own Resend key, SMTP server or Amazon SES account. Without a sender, the server's own transport is used."
      />
      <div className="space-y-4 p-5" data-testid="senders-section">
        {notice && <Alert tone="green">{notice}</Alert>}
        <ErrorAlert error={error} hideFieldErrors />
        {senders.error ? <ErrorAlert error={senders.error} /> : null}
        {items.length === 0 && !senders.isLoading && <p className="text-sm text-slate-500">No sender yet.</p>}
        <ul className="divide-y divide-slate-100">
          {items.map((s) => (
            <li key={s.id} className="flex flex-wrap items-center justify-between gap-2 py-3" data-testid="sender-row">
              <div className="min-w-0">
                <p className="text-sm font-medium text-slate-800">
                  {s.name} {s.isDefault && <Badge tone="blue" data-testid="sender-default">default</Badge>}
                </p>
                <p className="truncate text-xs text-slate-500">{s.from} · {describeSender(s)}</p>
                {s.lastError && <p className="text-xs text-red-600" data-testid="sender-error">{s.lastError}</p>}
              </div>
              <div className="flex gap-2">
                <Button size="sm" variant="secondary" loading={busy === `test:${s.id}`} onClick={() => void act(`test:${s.id}`, () => testSender(s.id), `Test email sent through "${s.name}" to your address.`)} data-testid="sender-test">
                  Send test
                </Button>
                {!s.isDefault && (
                  <Button size="sm" variant="secondary" loading={busy === `default:${s.id}`} onClick={() => void act(`default:${s.id}`, () => makeDefaultSender(s.id))} data-testid="sender-make-default">
                    Make default
                  </Button>
                )}
                <Button size="sm" variant="danger" loading={busy === `delete:${s.id}`} onClick={() => void act(`delete:${s.id}`, () => deleteSender(s.id))} data-testid="sender-delete">
                  Delete
                </Button>
              </div>
            </li>
          ))}
        </ul>
        <form onSubmit={(e) => void add(e)} className="space-y-3 border-t border-slate-100 pt-4" data-testid="sender-form">
          <div className="grid gap-3 sm:grid-cols-3">
            <Field label="Kind">
              {(id) => (
                <Select id={id} value={form.kind} onChange={set("kind")} data-testid="sender-kind">
                  <option value="smtp">SMTP server</option>
                  <option value="ses">Amazon SES</option>
                  <option value="resend">Resend</option>
                </Select>
              )}
            </Field>
            <Field label="Name" error={fieldError("name")}>
              {(id) => <Input id={id} value={form.name} onChange={set("name")} placeholder="Newsletter" data-testid="sender-name" />}
            </Field>
            <Field label="From" error={fieldError("from")}>
              {(id) => <Input id={id} value={form.from} onChange={set("from")} placeholder="Team <team@example.com>" data-testid="sender-from" />}
            </Field>
            <Field label="Reply-To" hint="Optional" error={fieldError("replyTo")}>
              {(id) => <Input id={id} value={form.replyTo} onChange={set("replyTo")} data-testid="sender-reply-to" />}
            </Field>
            <Field label="Emails per second" hint="Optional; the provider's default otherwise" error={fieldError("ratePerSecond")}>
              {(id) => <Input id={id} value={form.ratePerSecond} onChange={set("ratePerSecond")} inputMode="decimal" data-testid="sender-rate" />}
            </Field>
          </div>
          {form.kind === "resend" && (
            <Field label="Resend API key" error={fieldError("resend.apiKey") ?? fieldError("resend")}>
              {(id) => <Input id={id} type="password" value={form.apiKey} onChange={set("apiKey")} placeholder="re_…" autoComplete="off" data-testid="sender-api-key" />}
            </Field>
          )}
          {form.kind === "smtp" && (
            <div className="grid gap-3 sm:grid-cols-3">
              <Field label="Host" error={fieldError("smtp.host") ?? fieldError("smtp")}>
                {(id) => <Input id={id} value={form.host} onChange={set("host")} placeholder="smtp.example.com" data-testid="sender-host" />}
              </Field>
              <Field label="Port" error={fieldError("smtp.port")}>
                {(id) => <Input id={id} value={form.port} onChange={set("port")} inputMode="numeric" data-testid="sender-port" />}
              </Field>
              <Field label="Security">
                {(id) => (
                  <Select id={id} value={form.secure} onChange={set("secure")} data-testid="sender-secure">
                    <option value="false">STARTTLS when offered (587, 25)</option>
                    <option value="true">TLS (465)</option>
                  </Select>
                )}
              </Field>
              <Field label="User name" hint="Optional" error={fieldError("smtp.username")}>
                {(id) => <Input id={id} value={form.username} onChange={set("username")} autoComplete="off" data-testid="sender-username" />}
              </Field>
              <Field label="Password" hint="Optional" error={fieldError("smtp.password")}>
                {(id) => <Input id={id} type="password" value={form.password} onChange={set("password")} autoComplete="off" data-testid="sender-password" />}
              </Field>
            </div>
          )}
          {form.kind === "ses" && (
            <div className="grid gap-3 sm:grid-cols-2">
              <Field label="Region" error={fieldError("ses.region") ?? fieldError("ses")}>
                {(id) => <Input id={id} value={form.region} onChange={set("region")} placeholder="eu-west-1" data-testid="sender-region" />}
              </Field>
              <Field label="Configuration set" hint="Optional" error={fieldError("ses.configurationSet")}>
                {(id) => <Input id={id} value={form.configurationSet} onChange={set("configurationSet")} data-testid="sender-configuration-set" />}
              </Field>
              <Field label="Access key id" error={fieldError("ses.accessKeyId")}>
                {(id) => <Input id={id} value={form.accessKeyId} onChange={set("accessKeyId")} autoComplete="off" data-testid="sender-access-key-id" />}
              </Field>
              <Field label="Secret access key" error={fieldError("ses.secretAccessKey")}>
                {(id) => <Input id={id} type="password" value={form.secretAccessKey} onChange={set("secretAccessKey")} autoComplete="off" data-testid="sender-secret" />}
              </Field>
            </div>
          )}
          <Button type="submit" loading={busy === "new"} disabled={!form.name || !form.from} data-testid="sender-add">
            Add sender
          </Button>
        </form>
      </div>
    </Card>
  );
}
