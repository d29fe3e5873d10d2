-- Batches of due-date charge creates (POST /v1/charges/batch): the batch,
-- accepted in one transaction with its idempotency record, and one row per
-- item, which workers turn into charges. The counts are kept equal to the
-- items' statuses. The PostgreSQL variant has the same name.
CREATE TABLE IF NOT EXISTS charge_batches (
    id            TEXT    NOT NULL PRIMARY KEY,
    account_id    TEXT    NOT NULL,
    mode          TEXT    NOT NULL CHECK (mode IN ('live', 'test')),
    status        TEXT    NOT NULL CHECK (status IN ('processing', 'completed')),
    total         INTEGER NOT NULL CHECK (total BETWEEN 1 AND 1000),
    created       INTEGER NOT NULL CHECK (created >= 0),
    refused       INTEGER NOT NULL CHECK (refused >= 0),
    pending       INTEGER NOT NULL CHECK (pending >= 0),
    merchant_name TEXT    NOT NULL DEFAULT '',
    merchant_city TEXT    NOT NULL DEFAULT '',
    lote          TEXT    NOT NULL DEFAULT '',
    created_at    TEXT    NOT NULL CHECK (length(created_at) = 27),
    completed_at  TEXT    CHECK (length(completed_at) = 27),
    lease_until   TEXT    CHECK (length(lease_until) = 27),
    CHECK (created + refused + pending = total)
) STRICT;

CREATE INDEX IF NOT EXISTS charge_batches_open_idx ON charge_batches (lease_until, id) WHERE status = 'processing';

CREATE TABLE IF NOT EXISTS charge_batch_items (
    batch_id  TEXT    NOT NULL,
    idx       INTEGER NOT NULL CHECK (idx >= 0),
    status    TEXT    NOT NULL CHECK (status IN ('pending', 'created', 'refused')),
    input     TEXT    NOT NULL,
    charge_id TEXT    NOT NULL DEFAULT '',
    error     TEXT,
    attempts  INTEGER NOT NULL DEFAULT 0,
    txid      TEXT    NOT NULL DEFAULT '',
    PRIMARY KEY (batch_id, idx)
) STRICT;
