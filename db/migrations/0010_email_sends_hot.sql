-- Marking a batch sent as a HOT update. A 100,000-row run marks 40,000 ledger rows sent, 100 per
-- statement; each update changed `status` (in email_sends_run_node_status_idx) and `provider_message_id` (in
-- email_sends_provider_message_idx), so PostgreSQL wrote a new entry into all five indexes of the table for every row:
-- ~1.3 s of database CPU per 40,000 emails. Now no indexed column changes and each page keeps room for its rows' new
-- versions (fillfactor 45: a statement updates every row of a page at once), so the updates are heap-only: ~0.3 s.
-- - The node's rows by status are read through email_sends_run_node_item_key (run, node, item range) instead.
-- - The Resend event webhook finds an email by its provider message id in email_provider_ids, written by the
--   statement that marks the batch sent (the column on email_sends stays, unindexed, for the emails listing).
DROP INDEX IF EXISTS "email_sends_run_node_status_idx";--> statement-breakpoint
DROP INDEX IF EXISTS "email_sends_provider_message_idx";--> statement-breakpoint
ALTER TABLE "email_sends" SET (fillfactor = 45);--> statement-breakpoint
CREATE TABLE "email_provider_ids" (
	"provider_message_id" text PRIMARY KEY NOT NULL,
	"email_id" text NOT NULL
);
--> statement-breakpoint
INSERT INTO "email_provider_ids" ("provider_message_id", "email_id")
	SELECT "provider_message_id", "id" FROM "email_sends" WHERE "provider_message_id" IS NOT NULL
	ON CONFLICT DO NOTHING;
