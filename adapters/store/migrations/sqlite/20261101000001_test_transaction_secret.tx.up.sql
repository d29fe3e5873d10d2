-- One per-transaction webhook secret per mode (security.md, item 2): the
-- old column keeps signing live deliveries, the new one signs test ones.
-- Existing accounts get a fresh random test secret of 64 hex digits.
ALTER TABLE accounts ADD COLUMN test_transaction_webhook_secret text NOT NULL DEFAULT '';
UPDATE accounts
SET test_transaction_webhook_secret = lower(hex(randomblob(32)))
WHERE test_transaction_webhook_secret = '';
