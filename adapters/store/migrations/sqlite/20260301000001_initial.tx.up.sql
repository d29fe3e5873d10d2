-- Quita's initial schema, SQLite variant. Frozen: change the schema with a
-- new migration, never by editing this file. The PostgreSQL variant has the
-- same name under migrations/postgres and must describe the same schema.
--
-- Tables are STRICT, so a value of the wrong type is an error, not a silent
-- conversion. Instants are TEXT in one fixed-width UTC form,
-- 2006-01-02T15:04:05.000000Z (27 characters, checked), so that text order is
-- time order to the microsecond; SQLite's date functions read it. Amounts are
-- INTEGER (64-bit) minor units. charges, charge_events and idempotency_records
-- carry no foreign keys, as in the PostgreSQL variant.

CREATE TABLE IF NOT EXISTS accounts (
    id                     TEXT    NOT NULL PRIMARY KEY,
    name                   TEXT    NOT NULL,
    merchant_name          TEXT    NOT NULL DEFAULT '',
    merchant_city          TEXT    NOT NULL DEFAULT '',
    default_expiry_seconds INTEGER NOT NULL DEFAULT 0 CHECK (default_expiry_seconds >= 0),
    created_at             TEXT    NOT NULL CHECK (length(created_at) = 27)
) STRICT;

CREATE TABLE IF NOT EXISTS users (
    id            TEXT NOT NULL PRIMARY KEY,
    account_id    TEXT NOT NULL REFERENCES accounts (id),
    email         TEXT NOT NULL,
    -- email_key is the e-mail as compared (lower case): one login per
    -- address whatever its spelling.
    email_key     TEXT NOT NULL,
    password_hash TEXT NOT NULL,
    created_at    TEXT NOT NULL CHECK (length(created_at) = 27),
    CONSTRAINT users_email_key_unique UNIQUE (email_key)
) STRICT;

CREATE INDEX IF NOT EXISTS users_account_idx ON users (account_id);

CREATE TABLE IF NOT EXISTS api_keys (
    id          TEXT NOT NULL PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts (id),
    mode        TEXT NOT NULL CHECK (mode IN ('live', 'test')),
    fingerprint TEXT NOT NULL,
    prefix      TEXT NOT NULL,
    label       TEXT NOT NULL DEFAULT '',
    created_at  TEXT NOT NULL CHECK (length(created_at) = 27),
    revoked_at  TEXT CHECK (length(revoked_at) = 27),
    -- Every authenticated request looks its key up by fingerprint.
    CONSTRAINT api_keys_fingerprint_unique UNIQUE (fingerprint)
) STRICT;

CREATE INDEX IF NOT EXISTS api_keys_account_idx ON api_keys (account_id, created_at DESC);

CREATE TABLE IF NOT EXISTS charges (
    id                       TEXT    NOT NULL PRIMARY KEY,
    account_id               TEXT    NOT NULL,
    mode                     TEXT    NOT NULL CHECK (mode IN ('live', 'test')),
    amount                   INTEGER NOT NULL CHECK (amount > 0),
    currency                 TEXT    NOT NULL,
    methods                  TEXT    NOT NULL, -- JSON
    status                   TEXT    NOT NULL,
    description              TEXT    NOT NULL DEFAULT '',
    customer_name            TEXT    NOT NULL DEFAULT '',
    customer_document        TEXT    NOT NULL DEFAULT '',
    -- customer_document as compared: domain.NormalizeTaxID of it.
    customer_document_norm   TEXT    NOT NULL DEFAULT '',
    customer_email           TEXT    NOT NULL DEFAULT '',
    customer_phone           TEXT    NOT NULL DEFAULT '',
    customer_ref             TEXT    NOT NULL DEFAULT '',
    expected_payer           TEXT    NOT NULL DEFAULT '',
    metadata                 TEXT    NOT NULL, -- JSON
    webhook_url              TEXT    NOT NULL DEFAULT '',
    provider                 TEXT    NOT NULL DEFAULT '',
    provider_ref             TEXT    NOT NULL DEFAULT '',
    -- pix_*: NULL until the acquirer's Pix data is attached (pix_br_code
    -- marks it).
    pix_br_code              TEXT,
    pix_txid                 TEXT,
    pix_location             TEXT,
    pix_expires_at           TEXT    CHECK (length(pix_expires_at) = 27),
    -- settlement_*: NULL until a payment settles the charge
    -- (settlement_amount marks it).
    settlement_end_to_end_id TEXT,
    settlement_amount        INTEGER,
    settlement_paid_at       TEXT    CHECK (length(settlement_paid_at) = 27),
    settlement_paid_with     TEXT,
    settlement_payer_tax_id  TEXT,
    settlement_payer_name    TEXT,
    fee_provider             INTEGER NOT NULL DEFAULT 0,
    fee_platform             INTEGER NOT NULL DEFAULT 0,
    refunded_amount          INTEGER NOT NULL DEFAULT 0,
    return_state             TEXT    NOT NULL DEFAULT '',
    expires_at               TEXT    NOT NULL CHECK (length(expires_at) = 27),
    created_at               TEXT    NOT NULL CHECK (length(created_at) = 27),
    updated_at               TEXT    NOT NULL CHECK (length(updated_at) = 27),
    CONSTRAINT charges_refunded_within_amount CHECK (refunded_amount BETWEEN 0 AND amount)
) STRICT;

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

-- The transactional outbox. seq is the order of writing (AUTOINCREMENT: never
-- reused); payload is the envelope byte for byte as it will be signed and
-- delivered.
CREATE TABLE IF NOT EXISTS charge_events (
    seq           INTEGER PRIMARY KEY AUTOINCREMENT,
    id            TEXT    NOT NULL,
    account_id    TEXT    NOT NULL,
    mode          TEXT    NOT NULL CHECK (mode IN ('live', 'test')),
    charge_id     TEXT    NOT NULL,
    type          TEXT    NOT NULL,
    payload       BLOB    NOT NULL,
    created_at    TEXT    NOT NULL CHECK (length(created_at) = 27),
    -- Set by the dispatcher once the event is fanned out to deliveries.
    dispatched_at TEXT    CHECK (length(dispatched_at) = 27),
    CONSTRAINT charge_events_id_unique UNIQUE (id)
) STRICT;

CREATE INDEX IF NOT EXISTS charge_events_charge_idx ON charge_events (charge_id, seq);

CREATE INDEX IF NOT EXISTS charge_events_undispatched_idx
    ON charge_events (seq) WHERE dispatched_at IS NULL;

-- The durable half of idempotency: the key is written in the transaction
-- that creates the resource, so a retry can never create it twice.
CREATE TABLE IF NOT EXISTS idempotency_records (
    account_id  TEXT    NOT NULL,
    mode        TEXT    NOT NULL CHECK (mode IN ('live', 'test')),
    "key"       TEXT    NOT NULL,
    fingerprint TEXT    NOT NULL,
    resource_id TEXT    NOT NULL DEFAULT '',
    status_code INTEGER NOT NULL,
    body        BLOB    NOT NULL,
    created_at  TEXT    NOT NULL CHECK (length(created_at) = 27),
    PRIMARY KEY (account_id, mode, "key")
) STRICT;
