import { ok, route } from "@/lib/http/route";
import { testSender } from "@/lib/services/senders/test-sender";

export const dynamic = "force-dynamic";

// POST /api/senders/:senderId/test – one test email to the account's own address
export const POST = route({ auth: true }, async ({ account, params }) => ok(await testSender(account.id, params.senderId)));
