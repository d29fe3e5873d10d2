-- Stats and metrics of the payments surface read only these columns of an
-- account's recent charges: a covering index lets Postgres answer them
-- with an index-only scan instead of reading wide charge rows.
CREATE INDEX IF NOT EXISTS charges_stats_idx
    ON charges (account_id, mode, created_at)
    INCLUDE (currency, status, settlement_paid_with, amount, refund_completed, settlement_paid_at);

-- Charge counts per status, so the payments list's total needs no count of
-- the account's rows. Each charge counts in one of 16 shards (by id), so
-- concurrent writes of one account rarely wait on the same counter row.
CREATE TABLE IF NOT EXISTS charge_counts (
    account_id text    NOT NULL,
    mode       text    NOT NULL CHECK (mode IN ('live', 'test')),
    status     text    NOT NULL,
    shard      integer NOT NULL,
    n          bigint  NOT NULL,
    PRIMARY KEY (account_id, mode, status, shard)
);

INSERT INTO charge_counts (account_id, mode, status, shard, n)
SELECT account_id, mode, status, 0, COUNT(*) FROM charges GROUP BY account_id, mode, status;
