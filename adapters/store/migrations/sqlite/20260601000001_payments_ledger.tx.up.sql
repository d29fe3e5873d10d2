-- Payments surface, refunds and the double-entry ledger (SQLite). Frozen
-- once released; the PostgreSQL variant has the same name.

ALTER TABLE charges ADD COLUMN refund_completed INTEGER NOT NULL DEFAULT 0 CHECK (refund_completed >= 0);
ALTER TABLE charges ADD COLUMN card_redirect_url TEXT;
ALTER TABLE charges ADD COLUMN mb_entity TEXT;
ALTER TABLE charges ADD COLUMN mb_reference TEXT;
ALTER TABLE charges ADD COLUMN mb_expires_at TEXT CHECK (length(mb_expires_at) = 27);
ALTER TABLE charges ADD COLUMN boleto_barcode TEXT;
ALTER TABLE charges ADD COLUMN boleto_line TEXT;
ALTER TABLE charges ADD COLUMN boleto_pdf_url TEXT;
ALTER TABLE charges ADD COLUMN boleto_expires_at TEXT CHECK (length(boleto_expires_at) = 27);
ALTER TABLE charges ADD COLUMN crypto_address TEXT;
ALTER TABLE charges ADD COLUMN crypto_network TEXT;
ALTER TABLE charges ADD COLUMN crypto_currency TEXT;
ALTER TABLE charges ADD COLUMN crypto_amount TEXT;

CREATE INDEX IF NOT EXISTS charges_status_list_idx
    ON charges (account_id, mode, status, created_at DESC, id DESC);

CREATE TABLE IF NOT EXISTS refunds (
    id              TEXT    NOT NULL PRIMARY KEY,
    account_id      TEXT    NOT NULL,
    mode            TEXT    NOT NULL CHECK (mode IN ('live', 'test')),
    charge_id       TEXT    NOT NULL,
    amount          INTEGER NOT NULL CHECK (amount > 0),
    currency        TEXT    NOT NULL,
    status          TEXT    NOT NULL CHECK (status IN ('PENDING', 'IN_PROGRESS', 'REFUNDED', 'FAILED')),
    reason          TEXT    NOT NULL DEFAULT '',
    strategy        TEXT    NOT NULL DEFAULT '',
    pass_fee        INTEGER NOT NULL DEFAULT 0 CHECK (pass_fee IN (0, 1)),
    destination_key TEXT    NOT NULL DEFAULT '',
    fee             INTEGER NOT NULL DEFAULT 0 CHECK (fee >= 0),
    end_to_end_id   TEXT    NOT NULL DEFAULT '',
    provider_ref    TEXT    NOT NULL DEFAULT '',
    created_at      TEXT    NOT NULL CHECK (length(created_at) = 27),
    updated_at      TEXT    NOT NULL CHECK (length(updated_at) = 27)
) STRICT;

CREATE INDEX IF NOT EXISTS refunds_charge_idx ON refunds (charge_id, created_at DESC, id DESC);

CREATE INDEX IF NOT EXISTS refunds_open_idx
    ON refunds (updated_at, id) WHERE status IN ('PENDING', 'IN_PROGRESS');

CREATE TABLE IF NOT EXISTS ledger_entries (
    id         TEXT NOT NULL PRIMARY KEY,
    account_id TEXT NOT NULL,
    mode       TEXT NOT NULL CHECK (mode IN ('live', 'test')),
    charge_id  TEXT NOT NULL DEFAULT '',
    refund_id  TEXT NOT NULL DEFAULT '',
    kind       TEXT NOT NULL,
    created_at TEXT NOT NULL CHECK (length(created_at) = 27)
) STRICT;

CREATE INDEX IF NOT EXISTS ledger_entries_charge_idx ON ledger_entries (charge_id);

CREATE TABLE IF NOT EXISTS ledger_postings (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    entry_id       TEXT    NOT NULL,
    account_id     TEXT    NOT NULL,
    mode           TEXT    NOT NULL CHECK (mode IN ('live', 'test')),
    currency       TEXT    NOT NULL,
    ledger_account TEXT    NOT NULL,
    amount         INTEGER NOT NULL CHECK (amount <> 0)
) STRICT;

CREATE INDEX IF NOT EXISTS ledger_postings_entry_idx ON ledger_postings (entry_id);
CREATE INDEX IF NOT EXISTS ledger_postings_wallet_idx ON ledger_postings (account_id, mode, currency, ledger_account);

CREATE TABLE IF NOT EXISTS wallet_balances (
    account_id TEXT    NOT NULL,
    mode       TEXT    NOT NULL CHECK (mode IN ('live', 'test')),
    currency   TEXT    NOT NULL,
    available  INTEGER NOT NULL DEFAULT 0 CHECK (available >= 0),
    pending    INTEGER NOT NULL DEFAULT 0 CHECK (pending >= 0),
    updated_at TEXT    NOT NULL CHECK (length(updated_at) = 27),
    PRIMARY KEY (account_id, mode, currency)
) STRICT;

CREATE TABLE IF NOT EXISTS ledger_holds (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id TEXT    NOT NULL,
    mode       TEXT    NOT NULL CHECK (mode IN ('live', 'test')),
    currency   TEXT    NOT NULL,
    charge_id  TEXT    NOT NULL,
    amount     INTEGER NOT NULL CHECK (amount > 0),
    release_at TEXT    NOT NULL CHECK (length(release_at) = 27)
) STRICT;

CREATE INDEX IF NOT EXISTS ledger_holds_due_idx ON ledger_holds (release_at, id);
CREATE INDEX IF NOT EXISTS ledger_holds_wallet_idx ON ledger_holds (account_id, mode, currency, release_at);
