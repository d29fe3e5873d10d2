-- The access log's retention reads rows by created_at (see the PostgreSQL
-- variant, which uses a BRIN index; SQLite has only B-trees).
CREATE INDEX IF NOT EXISTS request_logs_created_idx ON request_logs (created_at);
