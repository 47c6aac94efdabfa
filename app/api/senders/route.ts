import { created, ok, route } from "@/lib/http/route";
import { createSenderBody } from "@/lib/schemas/senders";
import { createSender } from "@/lib/services/senders/create-sender";
import { listSenders } from "@/lib/services/senders/list-senders";

export const dynamic = "force-dynamic";

// GET /api/senders – the account's senders (secrets never returned)
export const GET = route({ auth: true }, async ({ account }) => ok(await listSenders(account.id)));

// POST /api/senders – add a Resend, SMTP or Amazon SES sender
export const POST = route({ auth: true, body: createSenderBody }, async ({ account, body }) => {
  const sender = await createSender(account.id, body);
  return created(sender, { Location: `/api/senders/${sender.id}` });
});
