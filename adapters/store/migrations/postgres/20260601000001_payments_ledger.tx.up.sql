-- Payments surface, refunds and the double-entry ledger (PostgreSQL).
-- Frozen once released; the SQLite variant has the same name.

-- Method data of the non-Pix methods (NULL when the method does not apply)
-- and the confirmed part of refunded_amount.
ALTER TABLE charges
    ADD COLUMN refund_completed  bigint NOT NULL DEFAULT 0,
    ADD COLUMN card_redirect_url text,
    ADD COLUMN mb_entity         text,
    ADD COLUMN mb_reference      text,
    ADD COLUMN mb_expires_at     timestamptz,
    ADD COLUMN boleto_barcode    text,
    ADD COLUMN boleto_line       text,
    ADD COLUMN boleto_pdf_url    text,
    ADD COLUMN boleto_expires_at timestamptz,
    ADD COLUMN crypto_address    text,
    ADD COLUMN crypto_network    text,
    ADD COLUMN crypto_currency   text,
    ADD COLUMN crypto_amount     text,
    ADD CONSTRAINT charges_refund_completed_within CHECK (refund_completed BETWEEN 0 AND refunded_amount);

-- The payments list filtered by status.
CREATE INDEX IF NOT EXISTS charges_status_list_idx
    ON charges (account_id, mode, status, created_at DESC, id DESC);

CREATE TABLE IF NOT EXISTS refunds (
    id              text        PRIMARY KEY,
    account_id      text        NOT NULL,
    mode            text        NOT NULL CHECK (mode IN ('live', 'test')),
    charge_id       text        NOT NULL,
    amount          bigint      NOT NULL CHECK (amount > 0),
    currency        text        NOT NULL,
    status          text        NOT NULL CHECK (status IN ('PENDING', 'IN_PROGRESS', 'REFUNDED', 'FAILED')),
    reason          text        NOT NULL DEFAULT '',
    strategy        text        NOT NULL DEFAULT '',
    pass_fee        boolean     NOT NULL DEFAULT false,
    destination_key text        NOT NULL DEFAULT '',
    fee             bigint      NOT NULL DEFAULT 0 CHECK (fee >= 0),
    end_to_end_id   text        NOT NULL DEFAULT '',
    provider_ref    text        NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL
);

CREATE INDEX IF NOT EXISTS refunds_charge_idx ON refunds (charge_id, created_at DESC, id DESC);

CREATE INDEX IF NOT EXISTS refunds_open_idx
    ON refunds (updated_at, id) WHERE status IN ('PENDING', 'IN_PROGRESS');

CREATE TABLE IF NOT EXISTS ledger_entries (
    id         text        PRIMARY KEY,
    account_id text        NOT NULL,
    mode       text        NOT NULL CHECK (mode IN ('live', 'test')),
    charge_id  text        NOT NULL DEFAULT '',
    refund_id  text        NOT NULL DEFAULT '',
    kind       text        NOT NULL,
    created_at timestamptz NOT NULL
);

CREATE INDEX IF NOT EXISTS ledger_entries_charge_idx ON ledger_entries (charge_id);

CREATE TABLE IF NOT EXISTS ledger_postings (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    entry_id       text   NOT NULL,
    account_id     text   NOT NULL,
    mode           text   NOT NULL CHECK (mode IN ('live', 'test')),
    currency       text   NOT NULL,
    ledger_account text   NOT NULL,
    amount         bigint NOT NULL CHECK (amount <> 0)
);

CREATE INDEX IF NOT EXISTS ledger_postings_entry_idx ON ledger_postings (entry_id);
CREATE INDEX IF NOT EXISTS ledger_postings_wallet_idx ON ledger_postings (account_id, mode, currency, ledger_account);

-- The materialised wallets, updated in the transaction of each entry.
CREATE TABLE IF NOT EXISTS wallet_balances (
    account_id text        NOT NULL,
    mode       text        NOT NULL CHECK (mode IN ('live', 'test')),
    currency   text        NOT NULL,
    available  bigint      NOT NULL DEFAULT 0 CHECK (available >= 0),
    pending    bigint      NOT NULL DEFAULT 0 CHECK (pending >= 0),
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (account_id, mode, currency)
);

-- Pending money by release date; pending = the sum of a wallet's holds.
CREATE TABLE IF NOT EXISTS ledger_holds (
    id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id text        NOT NULL,
    mode       text        NOT NULL CHECK (mode IN ('live', 'test')),
    currency   text        NOT NULL,
    charge_id  text        NOT NULL,
    amount     bigint      NOT NULL CHECK (amount > 0),
    release_at timestamptz NOT NULL
);

CREATE INDEX IF NOT EXISTS ledger_holds_due_idx ON ledger_holds (release_at, id);
CREATE INDEX IF NOT EXISTS ledger_holds_wallet_idx ON ledger_holds (account_id, mode, currency, release_at);
