-- Senders per account. Placeholder until the change lands.
SELECT 1;
