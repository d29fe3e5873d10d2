-- Dashboard sessions, audit and request logs, and the guards' settings,
-- SQLite variant. Frozen: change the schema with a new migration. The
-- PostgreSQL variant has the same name under migrations/postgres.

-- Issue, rotate and revoke of API keys, and guard refusals. Never a key
-- cleartext, password, token or payer document.
CREATE TABLE IF NOT EXISTS audit_logs (
    id              TEXT NOT NULL PRIMARY KEY,
    account_id      TEXT NOT NULL,
    user_id         TEXT NOT NULL DEFAULT '',
    action          TEXT NOT NULL,
    key_id          TEXT NOT NULL DEFAULT '',
    key_fingerprint TEXT NOT NULL DEFAULT '',
    code            TEXT NOT NULL DEFAULT '',
    created_at      TEXT NOT NULL CHECK (length(created_at) = 27)
) STRICT;

CREATE INDEX IF NOT EXISTS audit_logs_account_idx ON audit_logs (account_id, created_at DESC, id DESC);

-- One row per API request: route template, never a body, header or query.
CREATE TABLE IF NOT EXISTS request_logs (
    request_id      TEXT    NOT NULL PRIMARY KEY,
    account_id      TEXT    NOT NULL,
    mode            TEXT    NOT NULL DEFAULT '',
    key_fingerprint TEXT    NOT NULL DEFAULT '',
    method          TEXT    NOT NULL,
    path            TEXT    NOT NULL,
    status          INTEGER NOT NULL,
    duration_us     INTEGER NOT NULL,
    created_at      TEXT    NOT NULL CHECK (length(created_at) = 27)
) STRICT;

CREATE INDEX IF NOT EXISTS request_logs_account_idx ON request_logs (account_id, created_at DESC);
CREATE INDEX IF NOT EXISTS request_logs_key_idx ON request_logs (account_id, key_fingerprint, created_at DESC);

-- Logged-out dashboard tokens (jti) until they would have expired anyway.
CREATE TABLE IF NOT EXISTS revoked_tokens (
    jti        TEXT NOT NULL PRIMARY KEY,
    expires_at TEXT NOT NULL CHECK (length(expires_at) = 27)
) STRICT;

-- Per-account guard settings; 0 means the service default.
CREATE TABLE IF NOT EXISTS account_settings (
    account_id            TEXT    NOT NULL PRIMARY KEY REFERENCES accounts (id),
    rate_limit_per_second INTEGER NOT NULL DEFAULT 0 CHECK (rate_limit_per_second >= 0),
    rate_limit_burst      INTEGER NOT NULL DEFAULT 0 CHECK (rate_limit_burst >= 0),
    velocity_per_hour     INTEGER NOT NULL DEFAULT 0 CHECK (velocity_per_hour >= 0),
    amount_limit          INTEGER NOT NULL DEFAULT 0 CHECK (amount_limit >= 0),
    updated_at            TEXT    NOT NULL CHECK (length(updated_at) = 27)
) STRICT;

-- The account's payer block list (normalised CPF/CNPJ).
CREATE TABLE IF NOT EXISTS blocked_payers (
    account_id TEXT NOT NULL REFERENCES accounts (id),
    document   TEXT NOT NULL,
    created_at TEXT NOT NULL CHECK (length(created_at) = 27),
    PRIMARY KEY (account_id, document)
) STRICT;

-- The velocity guard also counts charges by payer lock.
CREATE INDEX IF NOT EXISTS charges_expected_payer_idx
    ON charges (account_id, mode, expected_payer, created_at DESC) WHERE expected_payer <> '';
