"use client";
import Link from "next/link";
import { useRouter, useSearchParams } from "next/navigation";
import { signIn } from "next-auth/react";
import { useState } from "react";
import { ApiError, api } from "@/lib/client/api";
import type { TokenPair } from "@/lib/client/types";
import { Alert, Button, ErrorAlert, Field, Input, useHydrated } from "@/components/ui";
import { OtpInput } from "./otp-input";

/**
 * Two steps on one page: the address (POST /api/auth/forgot-password emails a reset code to a verified account), then
 * the code and a new password (POST /api/auth/reset-password), which signs the person in.
 */
export function ForgotPasswordForm({ localMailbox = false }: { localMailbox?: boolean }) {
  const router = useRouter();
  const params = useSearchParams();
  const [email, setEmail] = useState(params.get("email") ?? "");
  const [sent, setSent] = useState(false);
  const [code, setCode] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const hydrated = useHydrated();
  const fieldError = (name: string) => (error instanceof ApiError ? error.fieldError(name) : undefined);

  async function requestCode(event?: React.FormEvent) {
    event?.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const { message } = await api.post<{ message: string }>("/api/auth/forgot-password", { email });
      setNotice(message);
      setSent(true);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }

  async function reset(event: React.FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const tokens = await api.post<TokenPair>("/api/auth/reset-password", { email, otp: code, newPassword: password });
      const result = await signIn("credentials", { accessToken: tokens.accessToken, redirect: false });
      if (result?.error) throw new Error("Your password is set, but the session could not start. Sign in with it.");
      router.push("/workflows");
    } catch (e) {
      setError(e);
      setBusy(false);
    }
  }

  const mailboxHint = localMailbox && (
    <Alert tone="blue" testId="forgot-mailbox-hint">
      This server has no email service set up, so the code goes to its local mailbox:{" "}
      <a href="/mailbox" target="_blank" rel="noopener" className="font-medium underline">open the mailbox</a> (in a new tab).
    </Alert>
  );

  if (!sent) {
    return (
      <form onSubmit={requestCode} className="space-y-5" data-testid="forgot-form" data-ready={hydrated} noValidate>
        <div>
          <h1 className="text-xl font-semibold">Reset your password</h1>
          <p className="mt-1 text-sm text-slate-500">Enter the address you sign in with and we will email you a 6-digit code.</p>
        </div>
        {error && !fieldError("email") ? <ErrorAlert error={error} testId="forgot-error" /> : null}
        <Field label="Email" error={fieldError("email")}>
          {(id) => <Input id={id} type="email" autoComplete="email" value={email} onChange={(e) => setEmail(e.target.value)} data-testid="forgot-email" required />}
        </Field>
        <Button type="submit" className="w-full" loading={busy} disabled={!hydrated || !email} data-testid="forgot-submit">
          Email me a code
        </Button>
        <p className="text-center text-sm">
          <Link href="/login" className="font-medium text-brand-600 hover:text-brand-700">Back to sign in</Link>
        </p>
      </form>
    );
  }

  return (
    <form onSubmit={reset} className="space-y-5" data-testid="reset-form" noValidate>
      <div>
        <h1 className="text-xl font-semibold">Choose a new password</h1>
        <p className="mt-1 text-sm text-slate-500">
          Enter the code sent to <span className="font-medium text-slate-700">{email}</span> (valid for 10 minutes) and your new password.
        </p>
      </div>
      {notice && <Alert tone="blue" testId="forgot-notice">{notice}</Alert>}
      {mailboxHint}
      {error && !fieldError("newPassword") ? <ErrorAlert error={error} testId="reset-error" /> : null}
      <OtpInput value={code} onChange={setCode} invalid={error instanceof ApiError && error.code === "invalid_otp"} />
      <Field label="New password" hint="At least 8 characters; a phrase of unrelated words works well." error={fieldError("newPassword")}>
        {(id) => (
          <Input id={id} type="password" autoComplete="new-password" value={password} onChange={(e) => setPassword(e.target.value)}
            data-testid="reset-password" required />
        )}
      </Field>
      <Button type="submit" className="w-full" loading={busy} disabled={code.length !== 6 || password.length === 0} data-testid="reset-submit">
        Set password and sign in
      </Button>
      <div className="flex items-center justify-between text-sm">
        <Button variant="ghost" size="sm" onClick={() => void requestCode()} disabled={busy} data-testid="forgot-resend">
          Send another code
        </Button>
        <Link href="/login" className="font-medium text-brand-600 hover:text-brand-700">Back to sign in</Link>
      </div>
    </form>
  );
}
