-- Which process runs each exclusive worker (a sweep that one process at a
-- time should run) and until when; another process takes it over once
-- expires_at passes. The PostgreSQL variant has the same name.
CREATE TABLE IF NOT EXISTS worker_leases (
    name       TEXT NOT NULL PRIMARY KEY,
    holder     TEXT NOT NULL,
    expires_at TEXT NOT NULL CHECK (length(expires_at) = 27)
);
