-- Where `quitad ledger verify` stopped: see the PostgreSQL variant, which
-- has the same name. SQLite's triggers run per row.
CREATE TABLE IF NOT EXISTS ledger_verify_checkpoint (
    id               INTEGER PRIMARY KEY CHECK (id = 1),
    version          INTEGER NOT NULL,
    postings_through INTEGER NOT NULL,
    events_through   INTEGER NOT NULL,
    rewrites         INTEGER NOT NULL,
    verified_at      TEXT    NOT NULL CHECK (length(verified_at) = 27),
    full_at          TEXT    NOT NULL CHECK (length(full_at) = 27)
) STRICT;

CREATE TABLE IF NOT EXISTS ledger_verify_sums (
    account_id     TEXT    NOT NULL,
    mode           TEXT    NOT NULL,
    currency       TEXT    NOT NULL,
    ledger_account TEXT    NOT NULL,
    amount         INTEGER NOT NULL,
    PRIMARY KEY (account_id, mode, currency, ledger_account)
) STRICT;

CREATE TABLE IF NOT EXISTS ledger_rewrites (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    n  INTEGER NOT NULL
) STRICT;
INSERT INTO ledger_rewrites (id, n) VALUES (1, 0) ON CONFLICT (id) DO NOTHING;

CREATE TRIGGER IF NOT EXISTS ledger_entries_rewritten_update AFTER UPDATE ON ledger_entries
BEGIN UPDATE ledger_rewrites SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER IF NOT EXISTS ledger_entries_rewritten_delete AFTER DELETE ON ledger_entries
BEGIN UPDATE ledger_rewrites SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER IF NOT EXISTS ledger_postings_rewritten_update AFTER UPDATE ON ledger_postings
BEGIN UPDATE ledger_rewrites SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER IF NOT EXISTS ledger_postings_rewritten_delete AFTER DELETE ON ledger_postings
BEGIN UPDATE ledger_rewrites SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER IF NOT EXISTS ledger_hold_takes_rewritten_update AFTER UPDATE ON ledger_hold_takes
BEGIN UPDATE ledger_rewrites SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER IF NOT EXISTS ledger_hold_takes_rewritten_delete AFTER DELETE ON ledger_hold_takes
BEGIN UPDATE ledger_rewrites SET n = n + 1 WHERE id = 1; END;
