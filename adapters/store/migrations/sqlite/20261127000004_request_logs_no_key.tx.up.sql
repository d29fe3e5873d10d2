-- The access log loses its primary key, as on PostgreSQL (see there): an
-- index nothing reads, whose random keys made every insert touch a random
-- page. SQLite cannot drop a primary key in place: the table is rebuilt
-- with the same columns and its three indexes.
CREATE TABLE request_logs_rebuilt (
    request_id      TEXT    NOT NULL,
    account_id      TEXT    NOT NULL,
    mode            TEXT    NOT NULL DEFAULT '',
    key_fingerprint TEXT    NOT NULL DEFAULT '',
    method          TEXT    NOT NULL,
    path            TEXT    NOT NULL,
    status          INTEGER NOT NULL,
    duration_us     INTEGER NOT NULL,
    created_at      TEXT    NOT NULL CHECK (length(created_at) = 27)
) STRICT;

INSERT INTO request_logs_rebuilt (request_id, account_id, mode, key_fingerprint, method, path, status, duration_us, created_at)
SELECT request_id, account_id, mode, key_fingerprint, method, path, status, duration_us, created_at FROM request_logs;

DROP TABLE request_logs;
ALTER TABLE request_logs_rebuilt RENAME TO request_logs;

CREATE INDEX request_logs_account_idx ON request_logs (account_id, created_at DESC);
CREATE INDEX request_logs_key_idx ON request_logs (account_id, key_fingerprint, created_at DESC);
CREATE INDEX request_logs_created_idx ON request_logs (created_at);
