-- Stats and metrics of the payments surface read these per-day totals
-- instead of scanning every charge of the window. One row per account,
-- mode, UTC day of creation, currency, status, settlement method and
-- shard; every insert of a charge and every change of its status, method,
-- amount or confirmed refunds writes its deltas in the same transaction
-- (adapters/store/day_totals.go). The 16 shards (by charge id, as in
-- charge_counts) keep concurrent writers of one account off a single row.
CREATE TABLE IF NOT EXISTS charge_day_totals (
    account_id text    NOT NULL,
    mode       text    NOT NULL CHECK (mode IN ('live', 'test')),
    day        text    NOT NULL CHECK (length(day) = 10),
    currency   text    NOT NULL,
    status     text    NOT NULL,
    paid_with  text    NOT NULL,
    shard      integer NOT NULL,
    n          bigint  NOT NULL,
    volume     bigint  NOT NULL,
    refunded   bigint  NOT NULL,
    PRIMARY KEY (account_id, mode, day, currency, status, paid_with, shard)
);

INSERT INTO charge_day_totals (account_id, mode, day, currency, status, paid_with, shard, n, volume, refunded)
SELECT account_id, mode, CAST(CAST(created_at AT TIME ZONE 'UTC' AS date) AS text), currency, status,
       COALESCE(settlement_paid_with, ''), 0, COUNT(*), SUM(amount), SUM(refund_completed)
FROM charges
GROUP BY 1, 2, 3, 4, 5, 6;

-- The median time to pay reads only the settled charges of the window.
CREATE INDEX IF NOT EXISTS charges_paid_stats_idx
    ON charges (account_id, mode, created_at) INCLUDE (currency, settlement_paid_at)
    WHERE settlement_paid_at IS NOT NULL;
