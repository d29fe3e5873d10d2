-- Webhooks: endpoints, deliveries and the account's transaction-webhook
-- secret. PostgreSQL variant; the SQLite one has the same name.

-- Signs the legacy events sent to a charge's per-transaction webhookUrl.
-- Accounts created before this migration get one on their first rotation
-- (an empty secret never signs: such deliveries fail until then).
ALTER TABLE accounts ADD COLUMN IF NOT EXISTS transaction_webhook_secret text NOT NULL DEFAULT '';

CREATE TABLE IF NOT EXISTS webhook_endpoints (
    id          text        PRIMARY KEY,
    account_id  text        NOT NULL REFERENCES accounts (id),
    mode        text        NOT NULL CHECK (mode IN ('live', 'test')),
    url         text        NOT NULL,
    events      jsonb       NOT NULL,
    status      text        NOT NULL CHECK (status IN ('ACTIVE', 'INACTIVE')),
    secret      text        NOT NULL,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    -- Deleted endpoints stay, so their deliveries keep their endpointId.
    deleted_at  timestamptz
);

CREATE INDEX IF NOT EXISTS webhook_endpoints_scope_idx
    ON webhook_endpoints (account_id, mode, created_at, id) WHERE deleted_at IS NULL;

-- One row per (event, receiver). endpoint_id is '' for a per-transaction
-- webhookUrl delivery, whose url is then kept here; an endpoint's url and
-- secret are read at attempt time. No foreign keys, as for charge_events.
CREATE TABLE IF NOT EXISTS webhook_deliveries (
    id               text        PRIMARY KEY,
    account_id       text        NOT NULL,
    mode             text        NOT NULL CHECK (mode IN ('live', 'test')),
    endpoint_id      text        NOT NULL DEFAULT '',
    url              text        NOT NULL DEFAULT '',
    event_id         text        NOT NULL,
    event_type       text        NOT NULL,
    charge_id        text        NOT NULL DEFAULT '',
    payload          bytea       NOT NULL,
    status           text        NOT NULL
        CHECK (status IN ('PENDING', 'PROCESSING', 'DELIVERED', 'FAILED', 'CANCELLED')),
    attempts         integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    max_attempts     integer     NOT NULL CHECK (max_attempts > 0),
    last_status_code integer,
    last_error       text,
    -- Due time of the next attempt while PENDING.
    next_retry_at    timestamptz,
    -- The lease of the worker attempting it while PROCESSING.
    lease_token      text,
    lease_until      timestamptz,
    delivered_at     timestamptz,
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL,
    -- Fan-out writes each (event, receiver) once, whatever happens.
    CONSTRAINT webhook_deliveries_event_endpoint_unique UNIQUE (event_id, endpoint_id)
);

-- Workers: due PENDING deliveries, and PROCESSING ones whose lease ran out.
CREATE INDEX IF NOT EXISTS webhook_deliveries_due_idx
    ON webhook_deliveries (next_retry_at) WHERE status = 'PENDING';
CREATE INDEX IF NOT EXISTS webhook_deliveries_lease_idx
    ON webhook_deliveries (lease_until) WHERE status = 'PROCESSING';

-- Listing, newest first, and cancelling an endpoint's open deliveries.
CREATE INDEX IF NOT EXISTS webhook_deliveries_list_idx
    ON webhook_deliveries (account_id, mode, created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS webhook_deliveries_endpoint_idx
    ON webhook_deliveries (endpoint_id, status);
