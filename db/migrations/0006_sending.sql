-- Sending like a careful bulk sender: the suppression list, the shared provider limiter, per-email
-- records (preview bodies, suppressed/duplicate statuses) and the unsubscribe headers kept by the local mailbox.
CREATE TABLE "suppressions" (
	"account_id" text NOT NULL REFERENCES "accounts"("id") ON DELETE cascade,
	"email" text NOT NULL,
	"reason" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "suppressions_pkey" PRIMARY KEY ("account_id", "email")
);--> statement-breakpoint
CREATE INDEX "suppressions_account_created_idx" ON "suppressions" ("account_id", "created_at", "email");--> statement-breakpoint
CREATE TABLE "email_send_pacing" (
	"key" text PRIMARY KEY NOT NULL,
	"next_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"slot_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"provider_limit" integer,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);--> statement-breakpoint
ALTER TABLE "email_sends" ADD COLUMN "body" text;--> statement-breakpoint
ALTER TABLE "email_sends" ADD COLUMN "format" text;--> statement-breakpoint
CREATE INDEX "email_sends_run_node_status_idx" ON "email_sends" ("run_id", "node_id", "status", "item_index");--> statement-breakpoint
CREATE INDEX "email_sends_provider_message_idx" ON "email_sends" ("provider_message_id") WHERE "provider_message_id" IS NOT NULL;--> statement-breakpoint
ALTER TABLE "mailbox_messages" ADD COLUMN "headers" jsonb;
