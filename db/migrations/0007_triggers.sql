-- Triggers: a workflow's schedule and the next slot it is due, one row per enqueued schedule slot
-- (the unique key that makes each slot exactly one run), inbound hooks (token stored hashed) and their recent deliveries.
ALTER TABLE "workflows" ADD COLUMN "schedule" jsonb;--> statement-breakpoint
ALTER TABLE "workflows" ADD COLUMN "schedule_next_at" timestamp (3) with time zone;--> statement-breakpoint
CREATE INDEX "workflows_schedule_due_idx" ON "workflows" USING btree ("schedule_next_at") WHERE "schedule_next_at" IS NOT NULL AND "deleted_at" IS NULL;--> statement-breakpoint
CREATE TABLE "schedule_slots" (
	"workflow_id" text NOT NULL,
	"slot_at" timestamp (3) with time zone NOT NULL,
	"run_id" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "schedule_slots_workflow_id_slot_at_pk" PRIMARY KEY("workflow_id","slot_at")
);
--> statement-breakpoint
ALTER TABLE "schedule_slots" ADD CONSTRAINT "schedule_slots_workflow_id_workflows_id_fk" FOREIGN KEY ("workflow_id") REFERENCES "public"."workflows"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE TABLE "inbound_hooks" (
	"id" text PRIMARY KEY NOT NULL,
	"workflow_id" text NOT NULL,
	"account_id" text NOT NULL,
	"token_hash" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "inbound_hooks" ADD CONSTRAINT "inbound_hooks_workflow_id_workflows_id_fk" FOREIGN KEY ("workflow_id") REFERENCES "public"."workflows"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "inbound_hooks" ADD CONSTRAINT "inbound_hooks_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "inbound_hooks_token_hash_key" ON "inbound_hooks" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "inbound_hooks_workflow_idx" ON "inbound_hooks" USING btree ("workflow_id","created_at");--> statement-breakpoint
CREATE TABLE "hook_deliveries" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"hook_id" text NOT NULL,
	"status" integer NOT NULL,
	"run_id" text,
	"code" text,
	"idempotency_key" text,
	"size_bytes" integer NOT NULL,
	"received_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "hook_deliveries" ADD CONSTRAINT "hook_deliveries_hook_id_inbound_hooks_id_fk" FOREIGN KEY ("hook_id") REFERENCES "public"."inbound_hooks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "hook_deliveries_hook_idx" ON "hook_deliveries" USING btree ("hook_id","id");
