-- The list indexes of the create path's tables become ascending (issue 17).
-- Their keys end in created_at DESC, so every new row's entry went to the
-- left end of its account's range: a B-tree splits such a page in half
-- (its rightmost-page and "split after the new tuple" optimisations are
-- for ascending inserts), leaving half-empty pages behind and logging a
-- split every few dozen inserts — 7.6 % of the WAL of the create benchmark
-- was these four indexes' left splits (pg_waldump, docs/performance.md).
-- Ascending, a new entry lands at the right end of its range, where pages
-- are split after it and left full. Postgres walks a B-tree backwards as
-- cheaply as forwards, and every list orders all its keys one way
-- (created_at DESC, id DESC), so the same indexes serve the same queries.
--
-- Each index is rebuilt under the same name in this transaction, which
-- holds a write lock on its table while it builds. On a large deployment
-- build the new ones first with CREATE INDEX CONCURRENTLY under other
-- names, drop the old ones CONCURRENTLY and rename, then let this
-- migration run (it rebuilds again: run it in a quiet hour, or mark it
-- applied once the indexes match).
DROP INDEX IF EXISTS charges_scope_created_idx;
CREATE INDEX charges_scope_created_idx
    ON charges (account_id, mode, created_at, id)
    INCLUDE (currency, status, settlement_paid_with, amount, refund_completed, settlement_paid_at);

DROP INDEX IF EXISTS charges_status_list_idx;
CREATE INDEX charges_status_list_idx ON charges (account_id, mode, status, created_at, id);

DROP INDEX IF EXISTS charges_document_part_idx;
CREATE INDEX charges_document_part_idx
    ON charges (account_id, mode, customer_document_norm, created_at, id)
    WHERE customer_document_norm <> '';

DROP INDEX IF EXISTS charges_expected_payer_idx;
CREATE INDEX charges_expected_payer_idx
    ON charges (account_id, mode, expected_payer, created_at) WHERE expected_payer <> '';

DROP INDEX IF EXISTS request_logs_account_idx;
CREATE INDEX request_logs_account_idx ON request_logs (account_id, created_at);

DROP INDEX IF EXISTS request_logs_key_idx;
CREATE INDEX request_logs_key_idx ON request_logs (account_id, key_fingerprint, created_at);
