"use client";
import Link from "next/link";
import { useSession } from "next-auth/react";
import { buttonClass } from "@/components/ui";

/** On the landing page: someone already signed in is pointed straight to the app instead of to sign-in. */
export function SignedInLink({ fallback }: { fallback: React.ReactNode }) {
  const { status } = useSession();
  if (status !== "authenticated") return <>{fallback}</>;
  return (
    <Link href="/workflows" className={buttonClass("primary", "sm")} data-testid="home-open-app">
      Open your workflows →
    </Link>
  );
}
