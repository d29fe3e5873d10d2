-- On PostgreSQL the outbox now holds one row per statement that writes
-- events (see that variant). SQLite's triggers run per row, and the
-- embedded database has one process and no row locks to save: its outbox
-- keeps one row per event, and the dispatcher reads it as one-event rows.
SELECT 1;
