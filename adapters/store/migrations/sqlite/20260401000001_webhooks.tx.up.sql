-- Webhooks: endpoints, deliveries and the account's transaction-webhook
-- secret. SQLite variant; the PostgreSQL one has the same name.

-- Signs the legacy events sent to a charge's per-transaction webhookUrl.
ALTER TABLE accounts ADD COLUMN transaction_webhook_secret TEXT NOT NULL DEFAULT '';

CREATE TABLE IF NOT EXISTS webhook_endpoints (
    id          TEXT NOT NULL PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts (id),
    mode        TEXT NOT NULL CHECK (mode IN ('live', 'test')),
    url         TEXT NOT NULL,
    events      TEXT NOT NULL,
    status      TEXT NOT NULL CHECK (status IN ('ACTIVE', 'INACTIVE')),
    secret      TEXT NOT NULL,
    created_at  TEXT NOT NULL CHECK (length(created_at) = 27),
    updated_at  TEXT NOT NULL CHECK (length(updated_at) = 27),
    deleted_at  TEXT CHECK (length(deleted_at) = 27)
) STRICT;

CREATE INDEX IF NOT EXISTS webhook_endpoints_scope_idx
    ON webhook_endpoints (account_id, mode, created_at, id) WHERE deleted_at IS NULL;

CREATE TABLE IF NOT EXISTS webhook_deliveries (
    id               TEXT    NOT NULL PRIMARY KEY,
    account_id       TEXT    NOT NULL,
    mode             TEXT    NOT NULL CHECK (mode IN ('live', 'test')),
    endpoint_id      TEXT    NOT NULL DEFAULT '',
    url              TEXT    NOT NULL DEFAULT '',
    event_id         TEXT    NOT NULL,
    event_type       TEXT    NOT NULL,
    charge_id        TEXT    NOT NULL DEFAULT '',
    payload          BLOB    NOT NULL,
    status           TEXT    NOT NULL
        CHECK (status IN ('PENDING', 'PROCESSING', 'DELIVERED', 'FAILED', 'CANCELLED')),
    attempts         INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    max_attempts     INTEGER NOT NULL CHECK (max_attempts > 0),
    last_status_code INTEGER,
    last_error       TEXT,
    next_retry_at    TEXT    CHECK (length(next_retry_at) = 27),
    lease_token      TEXT,
    lease_until      TEXT    CHECK (length(lease_until) = 27),
    delivered_at     TEXT    CHECK (length(delivered_at) = 27),
    created_at       TEXT    NOT NULL CHECK (length(created_at) = 27),
    updated_at       TEXT    NOT NULL CHECK (length(updated_at) = 27),
    CONSTRAINT webhook_deliveries_event_endpoint_unique UNIQUE (event_id, endpoint_id)
) STRICT;

CREATE INDEX IF NOT EXISTS webhook_deliveries_due_idx
    ON webhook_deliveries (next_retry_at) WHERE status = 'PENDING';
CREATE INDEX IF NOT EXISTS webhook_deliveries_lease_idx
    ON webhook_deliveries (lease_until) WHERE status = 'PROCESSING';
CREATE INDEX IF NOT EXISTS webhook_deliveries_list_idx
    ON webhook_deliveries (account_id, mode, created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS webhook_deliveries_endpoint_idx
    ON webhook_deliveries (endpoint_id, status);
