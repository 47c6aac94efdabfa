-- Run control: the advisory-lock key of the process executing a RUNNING run (a dead process's lock is
-- gone, so its runs are taken over at once), when retention dropped a run's outputs, and the account-wide run list.
ALTER TABLE "runs" ADD COLUMN "executor_key" integer;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "outputs_expired_at" timestamp (3) with time zone;--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "runs_account_seq_idx" ON "runs" USING btree ("account_id","seq");
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "runs_outputs_retention_idx" ON "runs" USING btree ("completed_at") WHERE "outputs_expired_at" IS NULL;
