import type { Metadata } from "next";
import { Suspense } from "react";
import { VerifyForm } from "@/components/auth/verify-form";
import { getConfig } from "@/lib/config";

export const metadata: Metadata = { title: "Verify your email" };
// The transport is a runtime setting (RESEND_API_KEY), not a build-time one.
export const dynamic = "force-dynamic";

export default function VerifyPage() {
  // Without an email service the code never leaves this server: say where it is instead of "check your email".
  const localMailbox = getConfig().emailTransport === "mailbox";
  return (
    <Suspense>
      <VerifyForm localMailbox={localMailbox} />
    </Suspense>
  );
}
