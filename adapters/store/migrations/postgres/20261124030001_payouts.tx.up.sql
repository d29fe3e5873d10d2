-- Payouts (issue 13): a merchant's withdrawal of available balance by Pix.
-- Frozen once released; the SQLite variant has the same name.
CREATE TABLE IF NOT EXISTS payouts (
    id              text        PRIMARY KEY,
    account_id      text        NOT NULL,
    mode            text        NOT NULL CHECK (mode IN ('live', 'test')),
    amount          bigint      NOT NULL CHECK (amount > 0),
    fee             bigint      NOT NULL CHECK (fee >= 0),
    currency        text        NOT NULL,
    status          text        NOT NULL CHECK (status IN ('pending', 'processing', 'paid', 'failed', 'cancelled')),
    key_type        text        NOT NULL,
    pix_key         text        NOT NULL,
    description     text        NOT NULL DEFAULT '',
    metadata        jsonb       NOT NULL,
    -- The PSP's id of the Pix (Efí's idEnvio), derived from the
    -- idempotency scope: unique, so no two payouts can name one Pix.
    send_id         text        NOT NULL UNIQUE,
    end_to_end_id   text        NOT NULL DEFAULT '',
    failure_code    text        NOT NULL DEFAULT '',
    failure_message text        NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    paid_at         timestamptz,
    failed_at       timestamptz,
    cancelled_at    timestamptz,
    -- Workers lease open payouts; a processing payout is looked at again
    -- (reconciled with the PSP) when its lease ends.
    lease_until     timestamptz
);

CREATE INDEX IF NOT EXISTS payouts_list_idx ON payouts (account_id, mode, created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS payouts_status_idx ON payouts (account_id, mode, status, created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS payouts_open_idx ON payouts (lease_until, id) WHERE status IN ('pending', 'processing');

ALTER TABLE ledger_entries ADD COLUMN payout_id text NOT NULL DEFAULT '';
CREATE INDEX IF NOT EXISTS ledger_entries_payout_idx ON ledger_entries (payout_id) WHERE payout_id <> '';
