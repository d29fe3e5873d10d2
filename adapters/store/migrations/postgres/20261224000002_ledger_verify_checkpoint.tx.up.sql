-- Where `quitad ledger verify` stopped, so the next run reads only what
-- was written since (adapters/store/verify_ledger.go;
-- docs/operations.md, "Verifying the ledger").
--
-- One row. postings_through and events_through are the last ledger
-- posting id and event seq the checkpoint covers: every posting and event
-- at or below them had committed (or rolled back) when it was taken.
-- ledger_verify_sums holds, per account, mode, currency and ledger
-- account, the sum of the postings at or below postings_through.
-- rewrites is the ledger_rewrites count the run saw; version grows by one
-- with each write, so two runs never both move the checkpoint.
CREATE TABLE IF NOT EXISTS ledger_verify_checkpoint (
    id               smallint    PRIMARY KEY CHECK (id = 1),
    version          bigint      NOT NULL,
    postings_through bigint      NOT NULL,
    events_through   bigint      NOT NULL,
    rewrites         bigint      NOT NULL,
    verified_at      timestamptz NOT NULL,
    full_at          timestamptz NOT NULL
);

CREATE TABLE IF NOT EXISTS ledger_verify_sums (
    account_id     text   NOT NULL,
    mode           text   NOT NULL,
    currency       text   NOT NULL,
    ledger_account text   NOT NULL,
    amount         bigint NOT NULL,
    PRIMARY KEY (account_id, mode, currency, ledger_account)
);

-- The ledger is append-only: no code updates or deletes an entry, a
-- posting or a hold take. A statement that does (by hand, a migration)
-- adds one to ledger_rewrites in its transaction, and the next ledger
-- verify, finding the count changed since its checkpoint, reads the
-- whole ledger again.
CREATE TABLE IF NOT EXISTS ledger_rewrites (
    id smallint PRIMARY KEY CHECK (id = 1),
    n  bigint   NOT NULL
);
INSERT INTO ledger_rewrites (id, n) VALUES (1, 0) ON CONFLICT (id) DO NOTHING;

CREATE OR REPLACE FUNCTION ledger_rewritten() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE ledger_rewrites SET n = n + 1 WHERE id = 1;
    RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS ledger_entries_rewritten ON ledger_entries;
CREATE TRIGGER ledger_entries_rewritten AFTER UPDATE OR DELETE OR TRUNCATE ON ledger_entries
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_rewritten();
DROP TRIGGER IF EXISTS ledger_postings_rewritten ON ledger_postings;
CREATE TRIGGER ledger_postings_rewritten AFTER UPDATE OR DELETE OR TRUNCATE ON ledger_postings
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_rewritten();
DROP TRIGGER IF EXISTS ledger_hold_takes_rewritten ON ledger_hold_takes;
CREATE TRIGGER ledger_hold_takes_rewritten AFTER UPDATE OR DELETE OR TRUNCATE ON ledger_hold_takes
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_rewritten();
