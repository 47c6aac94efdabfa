import Link from "next/link";

export default function HomePage() {
  return (
    <main className="mx-auto flex min-h-screen max-w-3xl flex-col justify-center gap-6 px-6">
      <h1 data-testid="home-title" className="text-4xl font-semibold tracking-tight">
        Flowmail
      </h1>
      <p className="text-lg text-slate-600">
        Draw a workflow — trigger, data source, AI, filter, output — run it, and watch every node turn green.
      </p>
      <div className="flex gap-3">
        <Link href="/register" className="rounded-md bg-brand-600 px-4 py-2 font-medium text-white hover:bg-brand-700">
          Create an account
        </Link>
        <Link href="/login" className="rounded-md border border-slate-300 px-4 py-2 font-medium hover:bg-white">
          Sign in
        </Link>
        <a href="/api/openapi.json" className="rounded-md px-4 py-2 font-medium text-slate-600 hover:text-slate-900">
          API reference
        </a>
      </div>
    </main>
  );
}
