-- Fewer index entries per create (issue 17): a create wrote 7 entries in
-- the charges' indexes and 5 for each of its two events.
--
-- charges_list_idx (account_id, mode, created_at DESC, id DESC) served the
-- lists, charges_stats_idx (account_id, mode, created_at) INCLUDE (…) the
-- stats: the same leading keys twice. One index with the list's order and
-- the stats' covered columns serves both (a B-tree is walked either way,
-- so the stats' ascending ranges read it backwards as cheaply).
CREATE INDEX IF NOT EXISTS charges_scope_created_idx
    ON charges (account_id, mode, created_at DESC, id DESC)
    INCLUDE (currency, status, settlement_paid_with, amount, refund_completed, settlement_paid_at);
DROP INDEX IF EXISTS charges_list_idx;
DROP INDEX IF EXISTS charges_stats_idx;

-- charge_events.created_at is read by the retention sweep only (the events
-- API walks (account_id, mode, seq) and filters dates on the way). Events
-- are appended in created_at order, so a BRIN index finds the old block
-- ranges for next to nothing per insert, as request_logs_created_brin does
-- for the access log.
CREATE INDEX IF NOT EXISTS charge_events_created_brin ON charge_events USING brin (created_at)
    WITH (autosummarize = on);
DROP INDEX IF EXISTS charge_events_created_idx;
