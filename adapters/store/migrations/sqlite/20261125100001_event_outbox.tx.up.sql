-- The outbox of undispatched events is its own table (issue 17; see the
-- PostgreSQL variant): inserting an event adds its seq here (a trigger,
-- so no insert path can forget it) and dispatching it deletes that row.
CREATE TABLE IF NOT EXISTS event_outbox (
    seq INTEGER NOT NULL PRIMARY KEY
) STRICT;

INSERT INTO event_outbox (seq) SELECT seq FROM charge_events WHERE dispatched_at IS NULL;

DROP INDEX IF EXISTS charge_events_undispatched_idx;
ALTER TABLE charge_events DROP COLUMN dispatched_at;

CREATE TRIGGER charge_events_outbox AFTER INSERT ON charge_events
BEGIN
    INSERT INTO event_outbox (seq) VALUES (NEW.seq);
END;
