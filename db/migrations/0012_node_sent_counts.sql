-- A running OUTPUT node's progress `sent` without counting its ledger. The
-- progress write (db/queries/send-ledger.ts writeSentProgress, at most every 250 ms per node) counted the node's sent
-- rows in email_sends: a scan of every row the node has sent so far, each heap row read for its status (status is in
-- no index, so that marking a batch sent stays a heap-only update, migration 0010). At 40,000 emails that was 20–40 ms
-- per write on PGlite, whose one connection every other statement waits behind: 17 writes held it ~0.4 s of a 5 s run.
-- Now the statement that marks a batch sent (markSent) adds the rows it changed to a per-(ledger run, node) count in
-- the same transaction, so the count is exact (a row becomes 'sent' once) and never counted twice; the progress write
-- sums a node's few rows. (markSentAndCount, which marks the one batch of a node of at most 100 emails, writes that
-- node's progress from the ledger itself and does not add here.) `slot` (the backend's pid modulo 64) spreads concurrent batches of one node over rows,
-- so they do not wait for each other's commit on one row. Rows go with their run (cascade).
CREATE TABLE "node_sent_counts" (
	"run_id" text NOT NULL,
	"node_id" text NOT NULL,
	"slot" smallint NOT NULL,
	"n" integer NOT NULL,
	CONSTRAINT "node_sent_counts_pk" PRIMARY KEY ("run_id", "node_id", "slot")
);
--> statement-breakpoint
ALTER TABLE "node_sent_counts" ADD CONSTRAINT "node_sent_counts_run_id_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."runs"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
-- Nodes sending while this migration runs keep their progress: their sent rows so far are counted once here (as 0011
-- did, only what was recorded in the last two days).
INSERT INTO "node_sent_counts" ("run_id", "node_id", "slot", "n")
	SELECT "run_id", "node_id", 0, count(*) FROM "email_sends"
	WHERE "created_at" >= now() - interval '2 days' AND "status" = 'sent' GROUP BY 1, 2;
