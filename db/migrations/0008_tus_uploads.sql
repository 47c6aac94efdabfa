-- Resumable uploads (tus 1.0): one row per unfinished or just-finished tus upload and its received
-- pieces (each PATCH's bytes, at most 4 MiB, keyed by the offset they start at: a piece is never stored twice).
-- The lease columns are the cross-instance lock; the sweep deletes rows past expires_at (24 h).
CREATE TABLE "tus_uploads" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"length" bigint NOT NULL,
	"offset" bigint DEFAULT 0 NOT NULL,
	"filename" text NOT NULL,
	"metadata" jsonb NOT NULL,
	"state" text DEFAULT 'receiving' NOT NULL,
	"upload_id" text,
	"problem" jsonb,
	"lock_token" text,
	"lock_expires_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "tus_uploads" ADD CONSTRAINT "tus_uploads_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tus_uploads" ADD CONSTRAINT "tus_uploads_upload_id_uploads_id_fk" FOREIGN KEY ("upload_id") REFERENCES "public"."uploads"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "tus_uploads_expires_idx" ON "tus_uploads" USING btree ("expires_at");--> statement-breakpoint
CREATE TABLE "tus_upload_pieces" (
	"tus_upload_id" text NOT NULL,
	"offset" bigint NOT NULL,
	"bytes" bytea NOT NULL,
	CONSTRAINT "tus_upload_pieces_tus_upload_id_offset_pk" PRIMARY KEY("tus_upload_id","offset")
);
--> statement-breakpoint
ALTER TABLE "tus_upload_pieces" ADD CONSTRAINT "tus_upload_pieces_tus_upload_id_tus_uploads_id_fk" FOREIGN KEY ("tus_upload_id") REFERENCES "public"."tus_uploads"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- Pieces are written once and read once (CSV bytes compress well, but pglz on PGlite costs more CPU than it saves).
ALTER TABLE "tus_upload_pieces" ALTER COLUMN "bytes" SET STORAGE EXTERNAL;
