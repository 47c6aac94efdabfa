-- Running it in production (trace context kept with a run). Placeholder until the change lands.
SELECT 1;
