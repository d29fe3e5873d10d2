-- Payouts (issue 13): a merchant's withdrawal of available balance by Pix.
-- Frozen once released; the PostgreSQL variant has the same name.
CREATE TABLE IF NOT EXISTS payouts (
    id              TEXT    NOT NULL PRIMARY KEY,
    account_id      TEXT    NOT NULL,
    mode            TEXT    NOT NULL CHECK (mode IN ('live', 'test')),
    amount          INTEGER NOT NULL CHECK (amount > 0),
    fee             INTEGER NOT NULL CHECK (fee >= 0),
    currency        TEXT    NOT NULL,
    status          TEXT    NOT NULL CHECK (status IN ('pending', 'processing', 'paid', 'failed', 'cancelled')),
    key_type        TEXT    NOT NULL,
    pix_key         TEXT    NOT NULL,
    description     TEXT    NOT NULL DEFAULT '',
    metadata        TEXT    NOT NULL, -- JSON
    send_id         TEXT    NOT NULL UNIQUE,
    end_to_end_id   TEXT    NOT NULL DEFAULT '',
    failure_code    TEXT    NOT NULL DEFAULT '',
    failure_message TEXT    NOT NULL DEFAULT '',
    created_at      TEXT    NOT NULL CHECK (length(created_at) = 27),
    updated_at      TEXT    NOT NULL CHECK (length(updated_at) = 27),
    paid_at         TEXT    CHECK (length(paid_at) = 27),
    failed_at       TEXT    CHECK (length(failed_at) = 27),
    cancelled_at    TEXT    CHECK (length(cancelled_at) = 27),
    lease_until     TEXT    CHECK (length(lease_until) = 27)
) STRICT;

CREATE INDEX IF NOT EXISTS payouts_list_idx ON payouts (account_id, mode, created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS payouts_status_idx ON payouts (account_id, mode, status, created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS payouts_open_idx ON payouts (lease_until, id) WHERE status IN ('pending', 'processing');

ALTER TABLE ledger_entries ADD COLUMN payout_id TEXT NOT NULL DEFAULT '';
CREATE INDEX IF NOT EXISTS ledger_entries_payout_idx ON ledger_entries (payout_id) WHERE payout_id <> '';
