-- Two events of one change share a row (issue 17). A create writes
-- charge.created and its legacy twin payment.created, a payment
-- charge.paid and payment.completed: the same charge, scope and instant,
-- two envelopes. As two rows each pair cost a second heap row and four
-- more index entries (seq, id, charge, scope); as one row the second
-- event is the row's twin (twin_id, twin_type, twin_payload, its envelope
-- byte for byte), found by id through the partial index below, placed
-- just after the row's first event in every order that seq gives.
-- Rows written before stay one event each.
--
-- The index is built inside this transaction, which holds a write lock on
-- charge_events while it scans the table (the column is new, so nothing
-- is indexed). On a large deployment, build it first with CREATE UNIQUE
-- INDEX CONCURRENTLY under this name, after adding the columns (instant):
-- this migration then leaves both alone.
ALTER TABLE charge_events ADD COLUMN IF NOT EXISTS twin_id text, ADD COLUMN IF NOT EXISTS twin_type text,
    ADD COLUMN IF NOT EXISTS twin_payload bytea;
CREATE UNIQUE INDEX IF NOT EXISTS charge_events_twin_idx ON charge_events (twin_id) WHERE twin_id IS NOT NULL;
