-- Which process runs each exclusive worker (a sweep that one process at a
-- time should run) and until when; another process takes it over once
-- expires_at passes. The SQLite variant has the same name.
CREATE TABLE IF NOT EXISTS worker_leases (
    name       text        NOT NULL PRIMARY KEY,
    holder     text        NOT NULL,
    expires_at timestamptz NOT NULL
);
