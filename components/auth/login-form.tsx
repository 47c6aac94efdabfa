"use client";
import Link from "next/link";
import { useRouter, useSearchParams } from "next/navigation";
import { signIn } from "next-auth/react";
import { useState } from "react";
import { ApiError, api } from "@/lib/client/api";
import { safeNext } from "@/lib/client/safe-next";
import type { TokenPair } from "@/lib/client/types";
import { Button, ErrorAlert, Field, Input, useHydrated } from "@/components/ui";

export function LoginForm() {
  const router = useRouter();
  const params = useSearchParams();
  const [form, setForm] = useState({ email: "", password: "" });
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const hydrated = useHydrated();
  const notVerified = error instanceof ApiError && error.code === "email_not_verified";

  async function submit(event: React.FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      // The REST login gives the contract's errors (unverified, rate limited) in words; its access
      // token then starts the browser session.
      const tokens = await api.post<TokenPair>("/api/auth/login", form);
      const result = await signIn("credentials", { accessToken: tokens.accessToken, redirect: false });
      if (result?.error) throw new Error("Signed in, but the session could not start. Try again.");
      router.push(safeNext(params.get("next"), window.location.origin));
    } catch (e) {
      setError(e);
      setBusy(false);
    }
  }

  const set = (name: keyof typeof form) => (e: React.ChangeEvent<HTMLInputElement>) => setForm({ ...form, [name]: e.target.value });
  return (
    <form onSubmit={submit} className="space-y-5" data-testid="login-form" data-ready={hydrated} noValidate>
      <div>
        <h1 className="text-xl font-semibold">Sign in to Flowmail</h1>
        <p className="mt-1 text-sm text-slate-500">Welcome back.</p>
      </div>
      {error ? (
        <ErrorAlert error={error} testId="login-error" hideFieldErrors={!notVerified} />
      ) : null}
      {notVerified && (
        <Link href={`/verify?email=${encodeURIComponent(form.email)}`} className="block text-sm font-medium text-brand-600">
          Enter your verification code →
        </Link>
      )}
      <Field label="Email" error={error instanceof ApiError ? error.fieldError("email") : undefined}>
        {(id) => <Input id={id} type="email" autoComplete="email" value={form.email} onChange={set("email")} data-testid="login-email" required />}
      </Field>
      <Field label="Password" error={error instanceof ApiError ? error.fieldError("password") : undefined}>
        {(id) => <Input id={id} type="password" autoComplete="current-password" value={form.password} onChange={set("password")} data-testid="login-password" required />}
      </Field>
      <p className="-mt-3 text-right text-sm">
        <Link
          href={form.email ? `/forgot-password?email=${encodeURIComponent(form.email)}` : "/forgot-password"}
          className="font-medium text-brand-600 hover:text-brand-700"
          data-testid="login-forgot"
        >
          Forgot your password?
        </Link>
      </p>
      <Button type="submit" className="w-full" loading={busy} disabled={!hydrated} data-testid="login-submit">
        Sign in
      </Button>
      <p className="text-center text-sm text-slate-500">
        New to Flowmail?{" "}
        <Link href="/register" className="font-medium text-brand-600 hover:text-brand-700">
          Create an account
        </Link>
      </p>
    </form>
  );
}
