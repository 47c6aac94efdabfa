import { noContent, ok, route } from "@/lib/http/route";
import { updateSenderBody } from "@/lib/schemas/senders";
import { deleteSender } from "@/lib/services/senders/delete-sender";
import { updateSender } from "@/lib/services/senders/update-sender";

export const dynamic = "force-dynamic";

// PATCH /api/senders/:senderId – change a sender
export const PATCH = route({ auth: true, body: updateSenderBody }, async ({ account, params, body }) =>
  ok(await updateSender(account.id, params.senderId, body)),
);

// DELETE /api/senders/:senderId – 409 sender_in_use while an OUTPUT node names it
export const DELETE = route({ auth: true }, async ({ account, params }) => {
  await deleteSender(account.id, params.senderId);
  return noContent();
});
