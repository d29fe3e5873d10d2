-- One per-transaction webhook secret per mode (security.md, item 2): the
-- old column keeps signing live deliveries, the new one signs test ones.
-- Existing accounts get a fresh random test secret: gen_random_uuid() draws
-- from the server's strong random source, two of them give 64 hex digits.
ALTER TABLE accounts ADD COLUMN IF NOT EXISTS test_transaction_webhook_secret text NOT NULL DEFAULT '';
UPDATE accounts
SET test_transaction_webhook_secret =
    replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', '')
WHERE test_transaction_webhook_secret = '';
