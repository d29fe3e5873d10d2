-- What each ledger entry took from each hold of pending money; see the
-- PostgreSQL variant of the same name for the why.
CREATE TABLE IF NOT EXISTS ledger_hold_takes (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    entry_id   TEXT    NOT NULL,
    account_id TEXT    NOT NULL,
    mode       TEXT    NOT NULL CHECK (mode IN ('live', 'test')),
    currency   TEXT    NOT NULL,
    charge_id  TEXT    NOT NULL,
    amount     INTEGER NOT NULL CHECK (amount > 0),
    release_at TEXT    NOT NULL CHECK (length(release_at) = 27)
) STRICT;

CREATE INDEX IF NOT EXISTS ledger_hold_takes_entry_idx ON ledger_hold_takes (entry_id);
