import { ok, route } from "@/lib/http/route";
import { mailboxQuery } from "@/lib/schemas/accounts";
import { listMailbox } from "@/lib/services/accounts/list-mailbox";

// GET /api/dev/mailbox?to= – the local mailbox, newest first. A local development tool without auth: it answers 404
// whenever Resend is the transport (RESEND_API_KEY set), and a production server runs it only with
// MAILBOX_ENABLED=true (without either it refuses to start: lib/config.ts), since anyone could read every sign-up code.
export const GET = route({ auth: false, query: mailboxQuery }, async ({ query }) => ok(await listMailbox(query)));
