-- Transfers between a platform and its sub-accounts (marketplaces.md):
-- money moved from the source's available balance to the destination's
-- in the transaction that writes the row. A transfer never changes.
CREATE TABLE IF NOT EXISTS transfers (
    id                     TEXT    NOT NULL PRIMARY KEY,
    source_account_id      TEXT    NOT NULL,
    destination_account_id TEXT    NOT NULL CHECK (destination_account_id <> source_account_id),
    mode                   TEXT    NOT NULL CHECK (mode IN ('live', 'test')),
    amount                 INTEGER NOT NULL CHECK (amount > 0),
    currency               TEXT    NOT NULL,
    description            TEXT    NOT NULL DEFAULT '',
    metadata               TEXT    NOT NULL, -- JSON
    created_at             TEXT    NOT NULL CHECK (length(created_at) = 27)
) STRICT;

-- Both sides list their transfers, newest first.
CREATE INDEX IF NOT EXISTS transfers_source_idx ON transfers (source_account_id, mode, created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS transfers_destination_idx ON transfers (destination_account_id, mode, created_at DESC, id DESC);

-- A transfer's two entries name it.
ALTER TABLE ledger_entries ADD COLUMN transfer_id TEXT NOT NULL DEFAULT '';
CREATE INDEX IF NOT EXISTS ledger_entries_transfer_idx ON ledger_entries (transfer_id) WHERE transfer_id <> '';
