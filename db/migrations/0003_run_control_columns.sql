-- Shared columns of part two: how a run was started, preview runs, reuse/retry chains, cancel,
-- hook bodies, reused node results and OUTPUT progress.
ALTER TABLE "runs" ADD COLUMN "trigger" text DEFAULT 'manual' NOT NULL;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "mode" text DEFAULT 'live' NOT NULL;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "until_node_id" text;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "retry_of" text;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "send_of" text;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "chain_root_id" text;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "trigger_body" jsonb;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "cancel_requested_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "node_results" ADD COLUMN "reused" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "node_results" ADD COLUMN "progress" jsonb;
