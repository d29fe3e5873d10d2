-- What each ledger entry took from each hold of pending money when it
-- debited pending (a refund takes the holds released last first). Written
-- in the entry's transaction and never changed: an entry's takes sum to
-- what its postings took from merchant_pending. A failed refund reads its
-- debit's takes and reopens each hold with its charge and release time.
-- Debits written before this table have no takes. The SQLite variant has
-- the same name.
CREATE TABLE IF NOT EXISTS ledger_hold_takes (
    id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    entry_id   text        NOT NULL,
    account_id text        NOT NULL,
    mode       text        NOT NULL CHECK (mode IN ('live', 'test')),
    currency   text        NOT NULL,
    -- The charge the hold was for, and when it was to be released.
    charge_id  text        NOT NULL,
    amount     bigint      NOT NULL CHECK (amount > 0),
    release_at timestamptz NOT NULL
);

CREATE INDEX IF NOT EXISTS ledger_hold_takes_entry_idx ON ledger_hold_takes (entry_id);
