-- The outbox of undispatched events is its own table (issue 17). Before,
-- an event was undispatched while charge_events.dispatched_at was NULL:
-- every event cost an entry in a partial index at insert and, at
-- dispatch, an UPDATE that rewrote its ~1.2 KB row and every one of its
-- indexes (the partial index's predicate made it non-HOT) — a second full
-- copy of each event. Now inserting an event adds its seq here (a
-- statement trigger, so no insert path can forget it) and dispatching it
-- deletes that row; the event itself is written once.
CREATE TABLE IF NOT EXISTS event_outbox (
    seq bigint PRIMARY KEY
);

INSERT INTO event_outbox (seq) SELECT seq FROM charge_events WHERE dispatched_at IS NULL;

DROP INDEX IF EXISTS charge_events_undispatched_idx;
ALTER TABLE charge_events DROP COLUMN dispatched_at;

CREATE FUNCTION charge_events_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO event_outbox (seq) SELECT seq FROM new_events;
    RETURN NULL;
END
$$;

CREATE TRIGGER charge_events_outbox AFTER INSERT ON charge_events
    REFERENCING NEW TABLE AS new_events FOR EACH STATEMENT EXECUTE FUNCTION charge_events_outbox();
