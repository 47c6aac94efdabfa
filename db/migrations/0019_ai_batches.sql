-- Batch mode of the AI node (`mode: "batch"`): one row per provider batch a node submitted (OpenAI Batch, Anthropic
-- Message Batches), keyed by (ledger run, node, seq). The row is written before the submission and given the
-- provider's batch id right after it, so a restart or a takeover polls the same batch instead of submitting again.
-- `items` holds the submitted items and their request hashes ([[index, hash], …]) while the batch is open: the answers
-- are recorded in the answer ledger (ai_items) for exactly those requests; a finished row keeps only `item_count`. `state`: submitting, running, collected (answers recorded),
-- cancelled (the run was cancelled and the provider's batch with it), abandoned (the process died between the
-- submission and the record of its id; its items were submitted again).
CREATE TABLE IF NOT EXISTS "ai_batches" (
	"run_id" text NOT NULL REFERENCES "runs"("id") ON DELETE cascade,
	"node_id" text NOT NULL,
	"seq" integer NOT NULL,
	"account_id" text NOT NULL REFERENCES "accounts"("id") ON DELETE cascade,
	"provider" text NOT NULL,
	"batch_id" text,
	"state" text DEFAULT 'submitting' NOT NULL,
	"items" jsonb NOT NULL,
	"item_count" integer NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"polled_at" timestamp (3) with time zone,
	"ended_at" timestamp (3) with time zone,
	CONSTRAINT "ai_batches_pkey" PRIMARY KEY ("run_id", "node_id", "seq")
);
