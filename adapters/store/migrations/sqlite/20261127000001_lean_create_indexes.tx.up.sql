-- Fewer index entries per create (issue 17), as on Postgres: one index with
-- the lists' order and the stats' columns instead of charges_list_idx and
-- charges_stats_idx, which led with the same keys. (SQLite has no BRIN:
-- charge_events_created_idx stays.)
CREATE INDEX IF NOT EXISTS charges_scope_created_idx
    ON charges (account_id, mode, created_at DESC, id DESC, currency, status, settlement_paid_with, amount,
                refund_completed, settlement_paid_at);
DROP INDEX IF EXISTS charges_list_idx;
DROP INDEX IF EXISTS charges_stats_idx;
