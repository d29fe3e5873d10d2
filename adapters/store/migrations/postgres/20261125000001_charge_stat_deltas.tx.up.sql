-- Changes to the charge counters (charge_counts, charge_day_totals) are
-- written here, insert-only, in the transaction of the charge change they
-- count, and folded into the totals by a worker (adapters/store/
-- stat_deltas.go; docs/performance.md). Readers sum totals and pending
-- deltas in one statement, so counts stay exact; a create no longer
-- updates rows every concurrent create of the account shares.
--
-- No index and no key: inserts are the hot path, the fold deletes every
-- row it reads, and the table stays small (a few seconds of changes).
CREATE TABLE IF NOT EXISTS charge_stat_deltas (
    account_id text   NOT NULL,
    mode       text   NOT NULL,
    day        text   NOT NULL,
    currency   text   NOT NULL,
    status     text   NOT NULL,
    paid_with  text   NOT NULL,
    n          bigint NOT NULL,
    volume     bigint NOT NULL,
    refunded   bigint NOT NULL
) WITH (autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_scale_factor = 0,
        autovacuum_vacuum_insert_threshold = 1000, autovacuum_vacuum_insert_scale_factor = 0);
