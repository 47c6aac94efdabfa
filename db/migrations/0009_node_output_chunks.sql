-- Large node outputs in pieces: a top-level array of more than 1,000 elements (a DATA_SOURCE's 100,000
-- rows, a FILTER's items) is stored as JSON text in rows of 2,000 elements, written one statement each, so no single
-- statement parses or writes tens of MB (on PGlite's only connection that froze every request for ~1 s). The node's
-- `output` keeps the rest of the object and the array's first 101 elements (what the run view previews); `spilled`
-- says which fields are cut: {"rows": {"length": 100000, "chunkItems": 2000}}.
ALTER TABLE "node_results" ADD COLUMN "spilled" jsonb;--> statement-breakpoint
CREATE TABLE "node_output_chunks" (
	"run_id" text NOT NULL,
	"node_id" text NOT NULL,
	"field" text NOT NULL,
	"seq" integer NOT NULL,
	"items" text NOT NULL,
	CONSTRAINT "node_output_chunks_pk" PRIMARY KEY("run_id","node_id","field","seq")
);
--> statement-breakpoint
ALTER TABLE "node_output_chunks" ADD CONSTRAINT "node_output_chunks_node_fk" FOREIGN KEY ("run_id","node_id") REFERENCES "public"."node_results"("run_id","node_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- Written once, read whole or by page: out of line without compression (PGlite has only the slow pglz).
ALTER TABLE "node_output_chunks" ALTER COLUMN "items" SET STORAGE EXTERNAL;
