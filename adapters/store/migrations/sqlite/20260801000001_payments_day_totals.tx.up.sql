-- Stats and metrics of the payments surface read these per-day totals
-- instead of scanning every charge of the window (see the Postgres
-- variant; adapters/store/day_totals.go keeps them in step with charges).
CREATE TABLE IF NOT EXISTS charge_day_totals (
    account_id TEXT    NOT NULL,
    mode       TEXT    NOT NULL CHECK (mode IN ('live', 'test')),
    day        TEXT    NOT NULL CHECK (length(day) = 10),
    currency   TEXT    NOT NULL,
    status     TEXT    NOT NULL,
    paid_with  TEXT    NOT NULL,
    shard      INTEGER NOT NULL,
    n          INTEGER NOT NULL,
    volume     INTEGER NOT NULL,
    refunded   INTEGER NOT NULL,
    PRIMARY KEY (account_id, mode, day, currency, status, paid_with, shard)
) STRICT;

INSERT INTO charge_day_totals (account_id, mode, day, currency, status, paid_with, shard, n, volume, refunded)
SELECT account_id, mode, substr(created_at, 1, 10), currency, status,
       COALESCE(settlement_paid_with, ''), 0, COUNT(*), SUM(amount), SUM(refund_completed)
FROM charges
GROUP BY 1, 2, 3, 4, 5, 6;

-- The median time to pay reads only the settled charges of the window.
CREATE INDEX IF NOT EXISTS charges_paid_stats_idx
    ON charges (account_id, mode, created_at, currency, settlement_paid_at)
    WHERE settlement_paid_at IS NOT NULL;
