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
-- An index already ascending is left alone; one still descending is
-- dropped and built again under its name inside this transaction, with
-- the write lock on its table that implies. On a large deployment, build
-- each new index first with CREATE INDEX CONCURRENTLY under another name,
-- DROP INDEX CONCURRENTLY the old one and rename the new one to the old
-- name: this migration then finds nothing to do.
DO $$
DECLARE
    spec record;
BEGIN
    FOR spec IN SELECT * FROM (VALUES
        ('charges_scope_created_idx',
         'CREATE INDEX charges_scope_created_idx ON charges (account_id, mode, created_at, id) '
         'INCLUDE (currency, status, settlement_paid_with, amount, refund_completed, settlement_paid_at)'),
        ('charges_status_list_idx',
         'CREATE INDEX charges_status_list_idx ON charges (account_id, mode, status, created_at, id)'),
        ('charges_document_part_idx',
         'CREATE INDEX charges_document_part_idx ON charges (account_id, mode, customer_document_norm, created_at, id) '
         'WHERE customer_document_norm <> ''''' ),
        ('charges_expected_payer_idx',
         'CREATE INDEX charges_expected_payer_idx ON charges (account_id, mode, expected_payer, created_at) '
         'WHERE expected_payer <> ''''' ),
        ('request_logs_account_idx',
         'CREATE INDEX request_logs_account_idx ON request_logs (account_id, created_at)'),
        ('request_logs_key_idx',
         'CREATE INDEX request_logs_key_idx ON request_logs (account_id, key_fingerprint, created_at)')
    ) AS t(name, ddl)
    LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_indexes
                       WHERE schemaname = current_schema() AND indexname = spec.name
                         AND indexdef NOT LIKE '% DESC%') THEN
            EXECUTE format('DROP INDEX IF EXISTS %I', spec.name);
            EXECUTE spec.ddl;
        END IF;
    END LOOP;
END $$;
