-- Hardening: the address and sender an OUTPUT node's emails are built with, fixed on the run when it is first
-- claimed, so that an instance with another APP_URL or EMAIL_FROM that resumes the run sends the very same bytes
-- under the same idempotency keys.
ALTER TABLE "runs" ADD COLUMN "email_identity" jsonb;
