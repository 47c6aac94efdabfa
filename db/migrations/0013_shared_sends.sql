-- Shared provider calls: the one email batch of small OUTPUT nodes of several runs goes to the provider in
-- one call (lib/nodes/output/shared-send.ts). Before that call its rows get the call's idempotency key (`send_key`) and
-- the exact email as sent (`send_payload`, JSON text: its position in the call and the email, key order kept), so a
-- resume — of any of the runs, in any process — sends the very same call again under the same key (the provider
-- answers it from its idempotency cache) instead of its own emails alone. Null for every other email. The partial
-- index finds a call's rows; marking rows sent does not change `send_key`, so those updates stay heap-only (0010).
ALTER TABLE "email_sends" ADD COLUMN "send_key" text;
--> statement-breakpoint
ALTER TABLE "email_sends" ADD COLUMN "send_payload" text;
--> statement-breakpoint
CREATE INDEX "email_sends_send_key_idx" ON "email_sends" ("send_key") WHERE "send_key" IS NOT NULL;
