"use client";
import Link from "next/link";
import { usePathname, useRouter } from "next/navigation";
import { signOut, useSession } from "next-auth/react";
import { useEffect, useState } from "react";
import { useQueryClient } from "@tanstack/react-query";
import { Logo, PageSpinner, cx } from "@/components/ui";
import { ThemeToggle } from "./theme";

const NAV = [
  { href: "/workflows", label: "Workflows", testId: "nav-workflows" },
  { href: "/runs", label: "Runs", testId: "nav-runs" },
  { href: "/uploads", label: "Uploads", testId: "nav-uploads" },
  { href: "/mailbox", label: "Mailbox", testId: "nav-mailbox" },
  { href: "/suppressions", label: "Suppressions", testId: "nav-suppressions" },
  { href: "/settings", label: "Settings", testId: "nav-settings" },
  { href: "/api-docs", label: "API", testId: "nav-api" },
];

// The local mailbox (where the verification code lands before anyone is signed in) and the API
// reference are readable without a session; every other page needs one.
const PUBLIC_PATHS = ["/mailbox", "/api-docs"];

/** Signed-in frame: top navigation, and a redirect to /login when there is no session. */
export function AppShell({ children }: { children: React.ReactNode }) {
  const { data: session, status } = useSession();
  const router = useRouter();
  const pathname = usePathname();
  const queryClient = useQueryClient();
  // Below 1024 px the links fold into a menu button; the menu closes when a page opens.
  const [menuOpen, setMenuOpen] = useState(false);
  const [menuPath, setMenuPath] = useState(pathname);
  if (menuPath !== pathname) {
    setMenuPath(pathname);
    setMenuOpen(false);
  }

  const isPublic = PUBLIC_PATHS.includes(pathname);
  useEffect(() => {
    if (status === "unauthenticated" && !isPublic) router.replace(`/login?next=${encodeURIComponent(pathname)}`);
  }, [status, router, pathname, isPublic]);

  async function logout() {
    await signOut({ redirect: false });
    queryClient.clear();
    router.push("/login");
  }

  if (status === "unauthenticated" && isPublic) return <PublicFrame>{children}</PublicFrame>;
  if (status !== "authenticated") return <PageSpinner label={status === "loading" ? "Loading…" : "Redirecting to sign in…"} />;
  const user = session.user;
  return (
    <div className="flex min-h-screen flex-col">
      <header className="sticky top-0 z-30 border-b border-slate-200 bg-white/90 backdrop-blur">
        <div className="flex h-14 items-center gap-3 px-4 sm:px-6 lg:gap-6">
          <Logo href="/workflows" />
          <button
            type="button"
            className="rounded-md px-2 py-1.5 text-sm font-medium text-slate-700 ring-1 ring-slate-200 lg:hidden"
            aria-expanded={menuOpen}
            aria-controls="main-nav"
            onClick={() => setMenuOpen((o) => !o)}
            data-testid="nav-toggle"
          >
            {menuOpen ? "Close" : "Menu"}
          </button>
          <nav
            id="main-nav"
            className={cx(
              "items-center gap-1 lg:static lg:flex lg:border-0 lg:bg-transparent lg:p-0 lg:shadow-none",
              menuOpen ? "absolute inset-x-0 top-14 flex flex-col items-stretch border-b border-slate-200 bg-white p-2 shadow-md" : "hidden",
            )}
            aria-label="Main"
          >
            {NAV.map((item) => {
              const active = pathname === item.href || pathname.startsWith(`${item.href}/`);
              return (
                <Link
                  key={item.href}
                  href={item.href}
                  data-testid={item.testId}
                  aria-current={active ? "page" : undefined}
                  className={cx(
                    "rounded-md px-3 py-1.5 text-sm font-medium transition-colors",
                    active ? "bg-brand-50 text-brand-700" : "text-slate-600 hover:bg-slate-100 hover:text-slate-900",
                  )}
                >
                  {item.label}
                </Link>
              );
            })}
          </nav>
          <div className="ml-auto flex items-center gap-2 lg:gap-3">
            <ThemeToggle />
            <span className="hidden text-sm text-slate-500 xl:inline" data-testid="current-user">
              {user?.name || user?.email}
            </span>
            <button onClick={() => void logout()} data-testid="logout" className="rounded-md px-3 py-1.5 text-sm font-medium text-slate-600 hover:bg-slate-100">
              Sign out
            </button>
          </div>
        </div>
      </header>
      <div className="flex flex-1 flex-col">{children}</div>
    </div>
  );
}

/** The usual page frame inside the shell (the editor uses the full width instead). */
export function PageContainer({ children, wide }: { children: React.ReactNode; wide?: boolean }) {
  return <main className={cx("mx-auto w-full px-4 py-8 sm:px-6", wide ? "max-w-7xl" : "max-w-5xl")}>{children}</main>;
}

function PublicFrame({ children }: { children: React.ReactNode }) {
  return (
    <div className="flex min-h-screen flex-col">
      <header className="border-b border-slate-200 bg-white">
        <div className="flex h-14 items-center gap-6 px-4 sm:px-6">
          <Logo />
          <div className="ml-auto flex gap-2">
            <ThemeToggle />
            <Link href="/login" className="rounded-md px-3 py-1.5 text-sm font-medium text-slate-600 hover:bg-slate-100">
              Sign in
            </Link>
            <Link href="/register" className="rounded-md bg-brand-600 px-3 py-1.5 text-sm font-medium text-white hover:bg-brand-700">
              Create an account
            </Link>
          </div>
        </div>
      </header>
      <div className="flex flex-1 flex-col">{children}</div>
    </div>
  );
}
