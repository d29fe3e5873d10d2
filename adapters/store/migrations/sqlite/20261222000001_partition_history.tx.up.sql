-- The PostgreSQL variant partitions charge_events and request_logs by
-- month; SQLite keeps them as they are (the embedded default's retention
-- deletes rows).
SELECT 1;
