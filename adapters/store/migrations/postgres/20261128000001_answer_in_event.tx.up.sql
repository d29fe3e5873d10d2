-- A charge create's answer is stored once (issue 17). Its 201 body is, byte
-- for byte, the data.object of its charge.created event, and both used to
-- be written: ~1.2 KB of heap and WAL twice per create. The record now
-- names the event (body_event) and keeps an empty body; the event names
-- the record's key (answers_key), so that the events' retention sweep can
-- copy the body back into the record before it deletes the event.
-- Records written before, and every other record (refunds, payouts, the
-- payments surface's answers), keep their body.
ALTER TABLE idempotency_records ADD COLUMN body_event text;
ALTER TABLE charge_events ADD COLUMN answers_key text;
