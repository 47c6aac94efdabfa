import type { Metadata } from "next";
import { Suspense } from "react";
import { ForgotPasswordForm } from "@/components/auth/forgot-password-form";
import { getConfig } from "@/lib/config";

export const metadata: Metadata = { title: "Reset your password" };
// The transport is a runtime setting (RESEND_API_KEY), not a build-time one.
export const dynamic = "force-dynamic";

export default function ForgotPasswordPage() {
  const localMailbox = getConfig().emailTransport === "mailbox";
  return (
    <Suspense>
      <ForgotPasswordForm localMailbox={localMailbox} />
    </Suspense>
  );
}
