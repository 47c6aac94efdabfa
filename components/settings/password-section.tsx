"use client";
import { signIn } from "next-auth/react";
import { useState } from "react";
import { ApiError, api } from "@/lib/client/api";
import { useAccount } from "@/lib/client/hooks";
import type { TokenPair } from "@/lib/client/types";
import { Alert, Button, Card, CardHeader, ErrorAlert, Field, Input } from "@/components/ui";

/**
 * Change the password (POST /api/account/password). The change signs out every session, this browser's too, so the
 * form signs this browser straight back in with the new password.
 */
export function PasswordSection() {
  const { data: account } = useAccount();
  const [form, setForm] = useState({ currentPassword: "", newPassword: "" });
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState(false);
  const [busy, setBusy] = useState(false);
  const fieldError = (name: string) => (error instanceof ApiError ? error.fieldError(name) : undefined);
  const wrongCurrent = error instanceof ApiError && error.code === "invalid_credentials";

  async function submit(e: React.FormEvent) {
    e.preventDefault();
    if (!account) return;
    setBusy(true);
    setError(null);
    setDone(false);
    try {
      await api.post("/api/account/password", form);
      const tokens = await api.post<TokenPair>("/api/auth/login", { email: account.email, password: form.newPassword });
      await signIn("credentials", { accessToken: tokens.accessToken, redirect: false });
      setForm({ currentPassword: "", newPassword: "" });
      setDone(true);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const set = (name: keyof typeof form) => (e: React.ChangeEvent<HTMLInputElement>) => setForm({ ...form, [name]: e.target.value });
  return (
    <Card>
      <CardHeader title="Password" description="Changing it signs you out everywhere else (other browsers, apps and API tokens)." />
      <form onSubmit={submit} className="space-y-4 p-5" data-testid="password-form" noValidate>
        {/* A hidden username lets password managers file the new password under the right account. */}
        <input type="email" autoComplete="username" value={account?.email ?? ""} readOnly hidden />
        <Field label="Current password" error={wrongCurrent ? "This is not your current password." : fieldError("currentPassword")}>
          {(id) => <Input id={id} type="password" autoComplete="current-password" value={form.currentPassword} onChange={set("currentPassword")} data-testid="password-current" />}
        </Field>
        <Field label="New password" hint="At least 8 characters; a phrase of unrelated words works well." error={fieldError("newPassword")}>
          {(id) => <Input id={id} type="password" autoComplete="new-password" value={form.newPassword} onChange={set("newPassword")} data-testid="password-new" />}
        </Field>
        {error && !wrongCurrent && !fieldError("newPassword") && !fieldError("currentPassword") ? <ErrorAlert error={error} /> : null}
        {done && <Alert tone="green" testId="password-changed">Password changed. Every other session is signed out.</Alert>}
        <Button type="submit" loading={busy} disabled={!account || !form.currentPassword || !form.newPassword} data-testid="password-save">
          Change password
        </Button>
      </form>
    </Card>
  );
}
