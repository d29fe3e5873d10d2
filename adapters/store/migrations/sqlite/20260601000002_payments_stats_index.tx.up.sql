-- Stats and metrics of the payments surface read only these columns of an
-- account's recent charges: a covering index (SQLite has no INCLUDE, so the
-- columns trail the key) avoids reading wide charge rows.
CREATE INDEX IF NOT EXISTS charges_stats_idx
    ON charges (account_id, mode, created_at, currency, status, settlement_paid_with, amount, refund_completed, settlement_paid_at);

-- Charge counts per status, so the payments list's total needs no count of
-- the account's rows (16 shards by charge id, as on Postgres).
CREATE TABLE IF NOT EXISTS charge_counts (
    account_id TEXT    NOT NULL,
    mode       TEXT    NOT NULL CHECK (mode IN ('live', 'test')),
    status     TEXT    NOT NULL,
    shard      INTEGER NOT NULL,
    n          INTEGER NOT NULL,
    PRIMARY KEY (account_id, mode, status, shard)
) STRICT;

INSERT INTO charge_counts (account_id, mode, status, shard, n)
SELECT account_id, mode, status, 0, COUNT(*) FROM charges GROUP BY account_id, mode, status;
