-- AI for every item: the answer ledger and the AI limiter. Placeholder until the change lands.
SELECT 1;
