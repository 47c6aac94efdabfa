-- AI for every item. `ai_items` is the answer ledger: one row per (ledger run, AI node, item) — the ledger run is the
-- first run of a retry chain, as for the send ledger — holding the hash of the request that was asked (model, system,
-- rendered prompt, declared outputs, temperature), its status, the answer and its usage. A resumed or retried node
-- asks again only the items without an answer for the same hash. The partial index finds an identical request the
-- account had answered recently (`reuseAnswersDays`). `ai_pacing` is the limiter shared by every call with one
-- provider key (a hash of it): the next request slot, the token budget's schedule and a hold after a 429;
-- `ai_inflight` holds one leased row per call in flight, at most `maxConcurrency` per key. The account columns are the
-- pacing and price settings of `PUT /api/account/ai-provider`.
CREATE TABLE "ai_items" (
	"run_id" text NOT NULL REFERENCES "runs"("id") ON DELETE cascade,
	"node_id" text NOT NULL,
	"item_index" integer NOT NULL,
	"account_id" text NOT NULL REFERENCES "accounts"("id") ON DELETE cascade,
	"request_hash" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"output" jsonb,
	"error" text,
	"input_tokens" integer,
	"output_tokens" integer,
	"cost_usd" double precision,
	"reused" boolean DEFAULT false NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"answered_at" timestamp (3) with time zone,
	CONSTRAINT "ai_items_pkey" PRIMARY KEY ("run_id", "node_id", "item_index")
);--> statement-breakpoint
CREATE INDEX "ai_items_run_node_status_idx" ON "ai_items" ("run_id", "node_id", "status", "item_index");--> statement-breakpoint
CREATE INDEX "ai_items_reuse_idx" ON "ai_items" ("account_id", "request_hash", "answered_at") WHERE "status" = 'done';--> statement-breakpoint
CREATE TABLE "ai_pacing" (
	"key" text PRIMARY KEY NOT NULL,
	"next_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"token_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"hold_until" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);--> statement-breakpoint
CREATE TABLE "ai_inflight" (
	"key" text NOT NULL,
	"slot" integer NOT NULL,
	"lease_until" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "ai_inflight_pkey" PRIMARY KEY ("key", "slot")
);--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "ai_requests_per_minute" integer;--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "ai_tokens_per_minute" integer;--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "ai_max_concurrency" integer;--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "ai_input_price_per_million" double precision;--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "ai_output_price_per_million" double precision;--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "ai_max_cost_per_run_usd" double precision;
