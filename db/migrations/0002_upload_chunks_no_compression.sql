-- Chunks of CSV rows are written once and read whole: storing them out of line without compression saves the
-- CPU of compressing ~50 MB per large upload (PGlite has no lz4, only the slow pglz).
ALTER TABLE "upload_chunks" ALTER COLUMN "rows" SET STORAGE EXTERNAL;
