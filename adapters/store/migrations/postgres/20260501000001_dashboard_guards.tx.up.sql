-- Dashboard sessions, audit and request logs, and the guards' settings,
-- PostgreSQL variant. Frozen: change the schema with a new migration. The
-- SQLite variant has the same name under migrations/sqlite.

-- Issue, rotate and revoke of API keys, and guard refusals. Never a key
-- cleartext, password, token or payer document.
CREATE TABLE IF NOT EXISTS audit_logs (
    id              text        PRIMARY KEY,
    account_id      text        NOT NULL,
    user_id         text        NOT NULL DEFAULT '',
    action          text        NOT NULL,
    key_id          text        NOT NULL DEFAULT '',
    key_fingerprint text        NOT NULL DEFAULT '',
    code            text        NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL
);

CREATE INDEX IF NOT EXISTS audit_logs_account_idx ON audit_logs (account_id, created_at DESC, id DESC);

-- One row per API request: route template, never a body, header or query.
CREATE TABLE IF NOT EXISTS request_logs (
    request_id      text        PRIMARY KEY,
    account_id      text        NOT NULL,
    mode            text        NOT NULL DEFAULT '',
    key_fingerprint text        NOT NULL DEFAULT '',
    method          text        NOT NULL,
    path            text        NOT NULL,
    status          integer     NOT NULL,
    duration_us     bigint      NOT NULL,
    created_at      timestamptz NOT NULL
);

CREATE INDEX IF NOT EXISTS request_logs_account_idx ON request_logs (account_id, created_at DESC);
CREATE INDEX IF NOT EXISTS request_logs_key_idx ON request_logs (account_id, key_fingerprint, created_at DESC);

-- Logged-out dashboard tokens (jti) until they would have expired anyway.
CREATE TABLE IF NOT EXISTS revoked_tokens (
    jti        text        PRIMARY KEY,
    expires_at timestamptz NOT NULL
);

-- Per-account guard settings; 0 means the service default.
CREATE TABLE IF NOT EXISTS account_settings (
    account_id            text        PRIMARY KEY REFERENCES accounts (id),
    rate_limit_per_second integer     NOT NULL DEFAULT 0 CHECK (rate_limit_per_second >= 0),
    rate_limit_burst      integer     NOT NULL DEFAULT 0 CHECK (rate_limit_burst >= 0),
    velocity_per_hour     integer     NOT NULL DEFAULT 0 CHECK (velocity_per_hour >= 0),
    amount_limit          bigint      NOT NULL DEFAULT 0 CHECK (amount_limit >= 0),
    updated_at            timestamptz NOT NULL
);

-- The account's payer block list (normalised CPF/CNPJ).
CREATE TABLE IF NOT EXISTS blocked_payers (
    account_id text        NOT NULL REFERENCES accounts (id),
    document   text        NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (account_id, document)
);

-- The velocity guard also counts charges by payer lock.
CREATE INDEX IF NOT EXISTS charges_expected_payer_idx
    ON charges (account_id, mode, expected_payer, created_at DESC) WHERE expected_payer <> '';
