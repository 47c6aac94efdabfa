-- The daily quota's upper bound. Before each OUTPUT node sends, the quota check counted the account's
-- pending and sent emails of the UTC day: an index scan over every email the account had recorded today, each heap
-- row read for its status. A tiny run (one email) late in a busy day scanned thousands of rows — 40 % of the database's
-- CPU in bench/tiny-exec, and more every run. Now every statement that records ledger rows (db/queries/send-ledger.ts,
-- the only writer of email_sends) adds the rows it inserted as `pending` to a per-(account, UTC day) count, and the
-- check reads that count first. Every row the quota counts (pending or sent, created today) was inserted pending
-- today (a failed row reopened was too; suppressed, duplicate and preview rows never become pending), and the count
-- never goes down, so it is never below the exact figure: when it plus the node's emails is within the quota, the
-- exact count is not needed. Only near the quota is the exact count made, as before.
-- `slot` (the backend's pid modulo 64) spreads concurrent inserts of one account over rows, so they do not wait for
-- each other's commit on one counter row. (A statement-level trigger would count inserts from anywhere, but cost
-- 1.5 ms per tiny run on PGlite.)
CREATE TABLE "email_quota_counts" (
	"account_id" text NOT NULL,
	"day" date NOT NULL,
	"slot" smallint NOT NULL,
	"n" integer NOT NULL,
	CONSTRAINT "email_quota_counts_pk" PRIMARY KEY ("account_id", "day", "slot")
);
--> statement-breakpoint
INSERT INTO "email_quota_counts" ("account_id", "day", "slot", "n")
	SELECT "account_id", ("created_at" AT TIME ZONE 'utc')::date, 0, count(*) FROM "email_sends"
	WHERE "created_at" >= now() - interval '2 days' AND "status" IN ('pending', 'sent', 'failed') GROUP BY 1, 2;
