import type { Metadata } from "next";
import { MailboxPage } from "@/components/mailbox/mailbox-page";

export const metadata: Metadata = { title: "Mailbox" };

export default function Page() {
  return <MailboxPage />;
}
