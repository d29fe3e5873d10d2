-- Batches of due-date charge creates (POST /v1/charges/batch): the batch,
-- accepted in one transaction with its idempotency record, and one row per
-- item, which workers turn into charges. The counts are kept equal to the
-- items' statuses. The SQLite variant has the same name.
CREATE TABLE IF NOT EXISTS charge_batches (
    id            text        PRIMARY KEY,
    account_id    text        NOT NULL,
    mode          text        NOT NULL CHECK (mode IN ('live', 'test')),
    status        text        NOT NULL CHECK (status IN ('processing', 'completed')),
    total         integer     NOT NULL CHECK (total BETWEEN 1 AND 1000),
    created       integer     NOT NULL CHECK (created >= 0),
    refused       integer     NOT NULL CHECK (refused >= 0),
    pending       integer     NOT NULL CHECK (pending >= 0),
    merchant_name text        NOT NULL DEFAULT '',
    merchant_city text        NOT NULL DEFAULT '',
    -- How far the batch's cobs were asked for together at the acquirer
    -- (API Pix lotecobv): '', 'asked', 'opened' or 'skipped'.
    lote          text        NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL,
    completed_at  timestamptz,
    -- The process working on the batch holds it until then; another
    -- takes it over once it ends.
    lease_until   timestamptz,
    CHECK (created + refused + pending = total)
);

CREATE INDEX IF NOT EXISTS charge_batches_open_idx ON charge_batches (lease_until, id) WHERE status = 'processing';

CREATE TABLE IF NOT EXISTS charge_batch_items (
    batch_id  text    NOT NULL,
    idx       integer NOT NULL CHECK (idx >= 0),
    status    text    NOT NULL CHECK (status IN ('pending', 'created', 'refused')),
    -- The item's create request, as the application encodes it.
    input     text    NOT NULL,
    charge_id text    NOT NULL DEFAULT '',
    -- A refused item's error (JSON: status, type, code, message, param).
    error     text,
    attempts  integer NOT NULL DEFAULT 0,
    -- The txid its cob was asked for under in the batch's lotecobv.
    txid      text    NOT NULL DEFAULT '',
    PRIMARY KEY (batch_id, idx)
);
