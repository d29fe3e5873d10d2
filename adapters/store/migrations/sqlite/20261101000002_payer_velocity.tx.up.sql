-- The velocity guard's admissions (security and issue 12 item 5): one row
-- per create attempt admitted for a payer document, keyed by its
-- idempotency key so a retry is not counted twice. The guard counts and
-- inserts in one transaction (SQLite has one writer), so concurrent creates for one
-- payer cannot overshoot the limit. Rows older than an hour are pruned by
-- the dashboard housekeeping worker.
CREATE TABLE IF NOT EXISTS payer_velocity (
    account_id text        NOT NULL,
    mode       text        NOT NULL CHECK (mode IN ('live', 'test')),
    idem_key   text        NOT NULL,
    payer      text        NOT NULL,
    created_at text NOT NULL,
    PRIMARY KEY (account_id, mode, idem_key)
);
CREATE INDEX IF NOT EXISTS payer_velocity_payer_idx ON payer_velocity (account_id, mode, payer, created_at);
CREATE INDEX IF NOT EXISTS payer_velocity_created_idx ON payer_velocity (created_at);
