"use client";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { ApiError, api } from "@/lib/client/api";
import { Button, ErrorAlert, Field, Input, useHydrated } from "@/components/ui";

export function RegisterForm() {
  const router = useRouter();
  const [form, setForm] = useState({ fullName: "", email: "", password: "" });
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const hydrated = useHydrated();
  const fieldError = (name: string) => (error instanceof ApiError ? error.fieldError(name) : undefined);

  async function submit(event: React.FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const res = await api.post<{ email: string }>("/api/auth/register", form);
      router.push(`/verify?email=${encodeURIComponent(res.email ?? form.email)}`);
    } catch (e) {
      setError(e);
      setBusy(false);
    }
  }

  const set = (name: keyof typeof form) => (e: React.ChangeEvent<HTMLInputElement>) => setForm({ ...form, [name]: e.target.value });
  return (
    <form onSubmit={submit} className="space-y-5" data-testid="register-form" data-ready={hydrated} noValidate>
      <div>
        <h1 className="text-xl font-semibold">Create your account</h1>
        <p className="mt-1 text-sm text-slate-500">We will email you a 6-digit code to confirm your address.</p>
      </div>
      <ErrorAlert error={error} testId="register-error" hideFieldErrors />
      <Field label="Full name" error={fieldError("fullName")} testId="register-name">
        {(id) => <Input id={id} autoComplete="name" value={form.fullName} onChange={set("fullName")} data-testid="register-name" required invalid={!!fieldError("fullName")} />}
      </Field>
      <Field label="Email" error={fieldError("email")} testId="register-email">
        {(id) => <Input id={id} type="email" autoComplete="email" value={form.email} onChange={set("email")} data-testid="register-email" required invalid={!!fieldError("email")} />}
      </Field>
      <Field label="Password" hint="At least 8 characters." error={fieldError("password")} testId="register-password">
        {(id) => <Input id={id} type="password" autoComplete="new-password" value={form.password} onChange={set("password")} data-testid="register-password" required invalid={!!fieldError("password")} />}
      </Field>
      <Button type="submit" className="w-full" loading={busy} disabled={!hydrated} data-testid="register-submit">
        Create account
      </Button>
      <p className="text-center text-sm text-slate-500">
        Already have an account?{" "}
        <Link href="/login" className="font-medium text-brand-600 hover:text-brand-700">
          Sign in
        </Link>
      </p>
    </form>
  );
}
