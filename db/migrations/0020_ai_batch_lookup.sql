-- A provider batch whose row has no batch id yet (`submitting`) may be at the provider all the same: the process that
-- submitted it may have stopped after the provider accepted it and before its id was written. `submitting_until` is
-- when that submission's call ends at the latest (its start plus the call's timeout; after a failed call, the time
-- its retry waits for): until then another process leaves the row alone, after it the row is looked up at the provider
-- by the tag the submission carried (OpenAI: the batch's metadata; Anthropic: its requests' custom ids), adopted if
-- found and submitted again only if the provider surely does not have it. Null: look it up at once.
ALTER TABLE "ai_batches" ADD COLUMN IF NOT EXISTS "submitting_until" timestamp (3) with time zone;
--> statement-breakpoint
-- A batch found at the provider is adopted only if no other row of the account holds its id.
CREATE INDEX IF NOT EXISTS "ai_batches_account_batch_idx" ON "ai_batches" ("account_id", "batch_id") WHERE "batch_id" IS NOT NULL;
