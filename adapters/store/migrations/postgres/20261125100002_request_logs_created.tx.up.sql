-- The access log's retention (dashboard-housekeeping, every minute: rows
-- older than 30 days, 1,000 at a time) had no index on created_at and read
-- the whole table each minute to find them — 30 days of every API request.
-- A BRIN index fits an append-only log whose physical order follows
-- created_at: a few pages, next to nothing per insert, and the scan reads
-- only the block ranges old enough to match.
CREATE INDEX IF NOT EXISTS request_logs_created_brin ON request_logs USING brin (created_at)
    WITH (autosummarize = on);
