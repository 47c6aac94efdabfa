-- Hardening: a workflow deleted while runs are enqueued, and other fixes. Placeholder until a change needs a statement.
SELECT 1;
