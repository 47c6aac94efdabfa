-- API keys. Placeholder until the change lands.
SELECT 1;
