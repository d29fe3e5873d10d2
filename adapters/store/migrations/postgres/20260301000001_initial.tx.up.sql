-- Quita's initial schema, PostgreSQL variant. Frozen: change the schema
-- with a new migration, never by editing this file. The SQLite variant has
-- the same name under migrations/sqlite and must describe the same schema.
--
-- Instants are timestamptz (microsecond precision); amounts are bigint minor
-- units. charges, charge_events and idempotency_records carry no foreign
-- keys: each check would take a KEY SHARE lock on the parent row, and every
-- create of one merchant would queue on that account's row.

CREATE TABLE IF NOT EXISTS accounts (
    id                     text        PRIMARY KEY,
    name                   text        NOT NULL,
    merchant_name          text        NOT NULL DEFAULT '',
    merchant_city          text        NOT NULL DEFAULT '',
    default_expiry_seconds bigint      NOT NULL DEFAULT 0 CHECK (default_expiry_seconds >= 0),
    created_at             timestamptz NOT NULL
);

CREATE TABLE IF NOT EXISTS users (
    id            text        PRIMARY KEY,
    account_id    text        NOT NULL REFERENCES accounts (id),
    email         text        NOT NULL,
    -- email_key is the e-mail as compared (lower case): one login per
    -- address whatever its spelling.
    email_key     text        NOT NULL,
    password_hash text        NOT NULL,
    created_at    timestamptz NOT NULL,
    CONSTRAINT users_email_key_unique UNIQUE (email_key)
);

CREATE INDEX IF NOT EXISTS users_account_idx ON users (account_id);

CREATE TABLE IF NOT EXISTS api_keys (
    id          text        PRIMARY KEY,
    account_id  text        NOT NULL REFERENCES accounts (id),
    mode        text        NOT NULL CHECK (mode IN ('live', 'test')),
    fingerprint text        NOT NULL,
    prefix      text        NOT NULL,
    label       text        NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL,
    revoked_at  timestamptz,
    -- Every authenticated request looks its key up by fingerprint.
    CONSTRAINT api_keys_fingerprint_unique UNIQUE (fingerprint)
);

CREATE INDEX IF NOT EXISTS api_keys_account_idx ON api_keys (account_id, created_at DESC);

CREATE TABLE IF NOT EXISTS charges (
    id                       text        PRIMARY KEY,
    account_id               text        NOT NULL,
    mode                     text        NOT NULL CHECK (mode IN ('live', 'test')),
    amount                   bigint      NOT NULL CHECK (amount > 0),
    currency                 text        NOT NULL,
    methods                  jsonb       NOT NULL,
    status                   text        NOT NULL,
    description              text        NOT NULL DEFAULT '',
    customer_name            text        NOT NULL DEFAULT '',
    customer_document        text        NOT NULL DEFAULT '',
    -- customer_document as compared: domain.NormalizeTaxID of it.
    customer_document_norm   text        NOT NULL DEFAULT '',
    customer_email           text        NOT NULL DEFAULT '',
    customer_phone           text        NOT NULL DEFAULT '',
    customer_ref             text        NOT NULL DEFAULT '',
    expected_payer           text        NOT NULL DEFAULT '',
    metadata                 jsonb       NOT NULL,
    webhook_url              text        NOT NULL DEFAULT '',
    provider                 text        NOT NULL DEFAULT '',
    provider_ref             text        NOT NULL DEFAULT '',
    -- pix_*: NULL until the acquirer's Pix data is attached (pix_br_code
    -- marks it).
    pix_br_code              text,
    pix_txid                 text,
    pix_location             text,
    pix_expires_at           timestamptz,
    -- settlement_*: NULL until a payment settles the charge
    -- (settlement_amount marks it).
    settlement_end_to_end_id text,
    settlement_amount        bigint,
    settlement_paid_at       timestamptz,
    settlement_paid_with     text,
    settlement_payer_tax_id  text,
    settlement_payer_name    text,
    fee_provider             bigint      NOT NULL DEFAULT 0,
    fee_platform             bigint      NOT NULL DEFAULT 0,
    refunded_amount          bigint      NOT NULL DEFAULT 0,
    return_state             text        NOT NULL DEFAULT '',
    expires_at               timestamptz NOT NULL,
    created_at               timestamptz NOT NULL,
    updated_at               timestamptz NOT NULL,
    CONSTRAINT charges_refunded_within_amount CHECK (refunded_amount BETWEEN 0 AND amount)
);

-- Listing, newest first, with a (created_at, id) keyset cursor.
CREATE INDEX IF NOT EXISTS charges_list_idx
    ON charges (account_id, mode, created_at DESC, id DESC);

-- Listing filtered by the customer's document (and the velocity guard).
CREATE INDEX IF NOT EXISTS charges_document_idx
    ON charges (account_id, mode, customer_document_norm, created_at DESC, id DESC);

-- The expiry worker: open charges by expiry. Queries must repeat the
-- predicate for the index to apply.
CREATE INDEX IF NOT EXISTS charges_open_expiry_idx
    ON charges (expires_at, id) WHERE status IN ('PENDING', 'WAITING_PAYMENT');

-- The return worker: payer returns requested and not yet confirmed.
CREATE INDEX IF NOT EXISTS charges_pending_return_idx
    ON charges (updated_at, id) WHERE return_state = 'requested';

-- Acquirer notifications name the cob by txid.
CREATE INDEX IF NOT EXISTS charges_txid_idx
    ON charges (pix_txid) WHERE pix_txid IS NOT NULL;

-- The transactional outbox. seq is the order of writing; payload is the
-- envelope byte for byte as it will be signed and delivered.
CREATE TABLE IF NOT EXISTS charge_events (
    seq           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id            text        NOT NULL,
    account_id    text        NOT NULL,
    mode          text        NOT NULL CHECK (mode IN ('live', 'test')),
    charge_id     text        NOT NULL,
    type          text        NOT NULL,
    payload       bytea       NOT NULL,
    created_at    timestamptz NOT NULL,
    -- Set by the dispatcher once the event is fanned out to deliveries.
    dispatched_at timestamptz,
    CONSTRAINT charge_events_id_unique UNIQUE (id)
);

CREATE INDEX IF NOT EXISTS charge_events_charge_idx ON charge_events (charge_id, seq);

CREATE INDEX IF NOT EXISTS charge_events_undispatched_idx
    ON charge_events (seq) WHERE dispatched_at IS NULL;

-- The durable half of idempotency: the key is written in the transaction
-- that creates the resource, so a retry can never create it twice.
CREATE TABLE IF NOT EXISTS idempotency_records (
    account_id  text        NOT NULL,
    mode        text        NOT NULL CHECK (mode IN ('live', 'test')),
    "key"       text        NOT NULL,
    fingerprint text        NOT NULL,
    resource_id text        NOT NULL DEFAULT '',
    status_code integer     NOT NULL,
    body        bytea       NOT NULL,
    created_at  timestamptz NOT NULL,
    PRIMARY KEY (account_id, mode, "key")
);
