-- Senders per account: an account's own Resend key, SMTP server or Amazon SES account, through which its OUTPUT nodes
-- send. `settings` holds what may be shown (host, port, user name, region, access key id); `secret_encrypted` the
-- rest (API key, password, secret access key) as AES-256-GCM ciphertext, of which only the last 4 characters are kept
-- in clear. At most one default sender per account (the partial unique index).
CREATE TABLE "senders" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"kind" text NOT NULL,
	"name" text NOT NULL,
	"from_address" text NOT NULL,
	"reply_to" text,
	"is_default" boolean DEFAULT false NOT NULL,
	"rate_per_second" double precision,
	"daily_quota" integer,
	"settings" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"secret_encrypted" text,
	"secret_last4" text,
	"last_error" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "senders" ADD CONSTRAINT "senders_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
CREATE INDEX "senders_account_created_idx" ON "senders" USING btree ("account_id","created_at");
--> statement-breakpoint
CREATE UNIQUE INDEX "senders_one_default_key" ON "senders" USING btree ("account_id") WHERE "is_default";
--> statement-breakpoint
-- A live run that sends again the emails of another run whose fate is unknown (POST …/resend-unknown): at most one per
-- source run.
ALTER TABLE "runs" ADD COLUMN "resend_of" text;
--> statement-breakpoint
-- Emails sent per limiter key (a sender's provider account) and UTC day, for a sender's `dailyQuota`: taken one by one
-- before each email, in the same statement that checks the quota.
CREATE TABLE "sender_daily_counts" (
	"key" text NOT NULL,
	"day" date NOT NULL,
	"n" integer NOT NULL,
	CONSTRAINT "sender_daily_counts_pk" PRIMARY KEY("key","day")
);
