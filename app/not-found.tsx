import Link from "next/link";
import { Logo, buttonClass } from "@/components/ui";

export const metadata = { title: "Page not found" };

export default function NotFound() {
  return (
    <div className="flex min-h-screen flex-col bg-gradient-to-b from-brand-50 via-slate-50 to-slate-50">
      <header className="mx-auto flex w-full max-w-5xl items-center px-6 py-5">
        <Logo />
      </header>
      <main className="mx-auto flex max-w-lg flex-1 flex-col items-center justify-center px-6 pb-24 text-center" data-testid="not-found">
        <p className="font-mono text-sm font-semibold text-brand-700">404</p>
        <h1 className="mt-2 text-2xl font-semibold text-slate-900">This page does not exist</h1>
        <p className="mt-2 text-sm text-slate-600">The address may be mistyped, or what it pointed to was deleted.</p>
        <div className="mt-6 flex gap-3">
          <Link href="/workflows" className={buttonClass("primary")}>Your workflows</Link>
          <Link href="/" className={buttonClass("secondary")}>Home</Link>
        </div>
      </main>
    </div>
  );
}
