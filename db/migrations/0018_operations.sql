-- Running it in production. The W3C trace context (`traceparent`) of the request that enqueued a run: the run's spans
-- are its children in whichever process executes it.
ALTER TABLE "runs" ADD COLUMN IF NOT EXISTS "traceparent" text;
--> statement-breakpoint
-- The queue as a whole (the pending-runs gauge, the oldest pending run's age, the sweep's lost wake-ups): an index of
-- the PENDING runs only, so these reads cost the size of the queue, not of the run history.
CREATE INDEX IF NOT EXISTS "runs_pending_idx" ON "runs" USING btree ("enqueued_at") WHERE "status" = 'PENDING';
