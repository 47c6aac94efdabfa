"use client";
import Link from "next/link";
import { useRouter, useSearchParams } from "next/navigation";
import { signIn } from "next-auth/react";
import { useEffect, useState } from "react";
import { ApiError, api, errorMessage } from "@/lib/client/api";
import type { TokenPair } from "@/lib/client/types";
import { Alert, Button, ErrorAlert, Field, Input, useHydrated } from "@/components/ui";
import { OtpInput } from "./otp-input";

const RESEND_SECONDS = 60;

/** Counts down to zero once a second; `restart(n)` starts again from n. */
function useCountdown(initial: number) {
  const [left, setLeft] = useState(initial);
  useEffect(() => {
    if (left <= 0) return;
    const timer = setTimeout(() => setLeft((n) => n - 1), 1000);
    return () => clearTimeout(timer);
  }, [left]);
  return [left, setLeft] as const;
}

export function VerifyForm({ localMailbox = false }: { localMailbox?: boolean }) {
  const router = useRouter();
  const params = useSearchParams();
  const [email, setEmail] = useState(params.get("email") ?? "");
  const [code, setCode] = useState("");
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const hydrated = useHydrated();
  // A code was just sent by registration, so the first resend waits the full minute.
  const [left, restart] = useCountdown(params.get("email") ? RESEND_SECONDS : 0);

  async function verify(otp: string) {
    if (busy) return;
    setBusy(true);
    setError(null);
    setNotice(null);
    try {
      const tokens = await api.post<TokenPair>("/api/auth/verify-email", { email, otp });
      const result = await signIn("credentials", { accessToken: tokens.accessToken, redirect: false });
      if (result?.error) throw new Error("Your email is verified, but the session could not start. Sign in to continue.");
      router.push("/workflows");
    } catch (e) {
      if (e instanceof ApiError && e.code === "already_verified") {
        setNotice("This address is already verified. Sign in to continue.");
      } else setError(e);
      setCode("");
      setBusy(false);
    }
  }

  async function resend() {
    setError(null);
    try {
      await api.post("/api/auth/resend-otp", { email });
      setNotice(`A new code is on its way to ${email}.`);
      restart(RESEND_SECONDS);
    } catch (e) {
      if (e instanceof ApiError && e.retryAfter) restart(e.retryAfter);
      setError(e);
    }
  }

  return (
    <form
      className="space-y-6"
      data-testid="verify-form"
      data-ready={hydrated}
      onSubmit={(e) => {
        e.preventDefault();
        void verify(code);
      }}
    >
      <div>
        <h1 className="text-xl font-semibold">Check your email</h1>
        <p className="mt-1 text-sm text-slate-500">
          Enter the 6-digit code we sent{email ? <> to <span className="font-medium text-slate-700">{email}</span></> : ""}. It is valid for 10 minutes.
        </p>
      </div>
      {localMailbox && (
        <Alert tone="blue" testId="verify-mailbox-hint">
          This server has no email service set up, so the code went to its local mailbox:{" "}
          <a href="/mailbox" target="_blank" rel="noopener" className="font-medium underline" data-testid="verify-mailbox-link">
            open the mailbox
          </a>{" "}
          (in a new tab) and copy the code from there.
        </Alert>
      )}
      {!params.get("email") && (
        <Field label="Email">
          {(id) => <Input id={id} type="email" value={email} onChange={(e) => setEmail(e.target.value)} data-testid="verify-email" />}
        </Field>
      )}
      {error ? <ErrorAlert error={error} testId="verify-error" /> : null}
      {notice && <Alert tone="blue" testId="verify-notice">{notice}</Alert>}
      <OtpInput value={code} onChange={setCode} onComplete={(otp) => void verify(otp)} invalid={!!error} />
      <Button type="submit" className="w-full" loading={busy} disabled={code.length !== 6 || !hydrated} data-testid="verify-submit">
        Verify and continue
      </Button>
      <div className="flex items-center justify-between text-sm">
        <Button variant="ghost" size="sm" onClick={() => void resend()} disabled={left > 0 || !email} data-testid="resend-otp">
          {left > 0 ? `Resend code in ${left}s` : "Resend code"}
        </Button>
        <Link href="/login" className="font-medium text-brand-600 hover:text-brand-700">
          Back to sign in
        </Link>
      </div>
      <p className="sr-only" aria-live="polite">{error ? errorMessage(error) : ""}</p>
    </form>
  );
}
