-- Two events of one change share a row (issue 17; the Postgres migration
-- of this name says why): the second is the row's twin, found by id
-- through the partial index.
ALTER TABLE charge_events ADD COLUMN twin_id TEXT;
ALTER TABLE charge_events ADD COLUMN twin_type TEXT;
ALTER TABLE charge_events ADD COLUMN twin_payload BLOB;
CREATE UNIQUE INDEX IF NOT EXISTS charge_events_twin_idx ON charge_events (twin_id) WHERE twin_id IS NOT NULL;
