import Link from "next/link";
import { SignedInLink } from "@/components/home/signed-in-link";
import { Logo, buttonClass } from "@/components/ui";

const STEPS = [
  { type: "TRIGGER", text: "Start a run from the editor or the API." },
  { type: "DATA_SOURCE", text: "Read rows from an uploaded CSV or a Google Sheet." },
  { type: "AI", text: "Ask a model for structured fields per workflow." },
  { type: "FILTER", text: "Keep the rows that match an expression." },
  { type: "OUTPUT", text: "Send one email per item, exactly once." },
];

export default function HomePage() {
  return (
    <div className="min-h-screen bg-gradient-to-b from-brand-50 via-slate-50 to-slate-50">
      <header className="mx-auto flex max-w-5xl items-center justify-between px-6 py-5">
        <Logo />
        <nav className="flex gap-2">
          <Link href="/api-docs" className={buttonClass("ghost", "sm")}>API reference</Link>
          <SignedInLink fallback={<Link href="/login" className={buttonClass("ghost", "sm")} data-testid="home-login">Sign in</Link>} />
        </nav>
      </header>
      <main className="mx-auto max-w-5xl px-6 pb-20 pt-16">
        <h1 data-testid="home-title" className="max-w-2xl text-5xl font-semibold tracking-tight text-slate-900">
          Flowmail
        </h1>
        <p className="mt-4 max-w-2xl text-xl text-slate-600">
          Draw a workflow — trigger, data source, AI, filter, output — run it, and watch every node turn green as one email goes out per row.
        </p>
        <div className="mt-8 flex gap-3">
          <Link href="/register" className={buttonClass("primary")} data-testid="home-register">
            Create an account
          </Link>
          <Link href="/login" className={buttonClass("secondary")}>
            Sign in
          </Link>
        </div>
        <ol className="mt-16 grid gap-4 sm:grid-cols-5">
          {STEPS.map((step, i) => (
            <li key={step.type} className="rounded-xl bg-white p-4 shadow-sm ring-1 ring-slate-200">
              <p className="text-xs font-medium text-slate-400">Step {i + 1}</p>
              <p className="mt-1 font-mono text-sm font-semibold text-brand-700">{step.type}</p>
              <p className="mt-2 text-sm text-slate-600">{step.text}</p>
            </li>
          ))}
        </ol>
      </main>
    </div>
  );
}
