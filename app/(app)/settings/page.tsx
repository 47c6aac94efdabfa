import type { Metadata } from "next";
import { Suspense } from "react";
import { AccountSection, AiProviderSection } from "@/components/settings/account-section";
import { GoogleSection, WebhooksSection } from "@/components/settings/integrations-section";
import { ApiKeysSection } from "@/components/settings/api-keys-section";
import { PasswordSection } from "@/components/settings/password-section";
import { SendersSection } from "@/components/settings/senders-section";
import { PageHeader } from "@/components/ui";
import { PageContainer } from "@/components/shell/app-shell";

export const metadata: Metadata = { title: "Settings" };

export default function SettingsPage() {
  return (
    <PageContainer>
      <PageHeader title="Settings" description="Your account, the AI provider your AI nodes use, Google Drive and webhooks." />
      <div className="space-y-6">
        <AccountSection />
        <PasswordSection />
        <AiProviderSection />
        <Suspense>
          <GoogleSection />
        </Suspense>
        <SendersSection />
        <WebhooksSection />
        <ApiKeysSection />
      </div>
    </PageContainer>
  );
}
