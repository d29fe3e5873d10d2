-- As on PostgreSQL: a charge create's answer is stored once, in its
-- charge.created event, which the record names (body_event); the event
-- names the record's key (answers_key) for the retention sweep.
ALTER TABLE idempotency_records ADD COLUMN body_event TEXT;
ALTER TABLE charge_events ADD COLUMN answers_key TEXT;
