-- A live create records its intent to open a cob (txid derived from the
-- Idempotency-Key) before calling the acquirer; the orphan sweep cancels
-- the cob of an intent whose charge never committed (security.md, issue 11
-- item 10). Fulfilled intents are deleted by the same sweep.
CREATE TABLE IF NOT EXISTS provider_intents (
    account_id text NOT NULL,
    mode       text NOT NULL CHECK (mode IN ('live', 'test')),
    idem_key   text NOT NULL,
    txid       text NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (account_id, mode, idem_key)
);
CREATE INDEX IF NOT EXISTS provider_intents_created_idx ON provider_intents (created_at);
