-- One outbox row per statement that writes events, not one per event
-- (issue 17). A create batch writes the events of up to 64 charges in one
-- INSERT; each event used to add an outbox row and an index entry, which
-- the dispatcher then locked (a heap write each) and deleted. Now the
-- statement trigger adds one row holding the new events' seqs in order,
-- and a dispatch pass locks and deletes one row per statement.
CREATE TABLE event_outbox_rows (
    id   bigint   GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    seqs bigint[] NOT NULL CHECK (cardinality(seqs) > 0)
);

-- What is still undispatched moves over, 256 events a row, oldest first.
INSERT INTO event_outbox_rows (seqs)
SELECT array_agg(seq ORDER BY seq) FROM event_outbox GROUP BY seq / 256 ORDER BY min(seq);

DROP TRIGGER charge_events_outbox ON charge_events;
DROP TABLE event_outbox;
ALTER TABLE event_outbox_rows RENAME TO event_outbox;
ALTER INDEX event_outbox_rows_pkey RENAME TO event_outbox_pkey;

CREATE OR REPLACE FUNCTION charge_events_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO event_outbox (seqs) SELECT array_agg(seq ORDER BY seq) FROM new_events HAVING count(*) > 0;
    RETURN NULL;
END
$$;

CREATE TRIGGER charge_events_outbox AFTER INSERT ON charge_events
    REFERENCING NEW TABLE AS new_events FOR EACH STATEMENT EXECUTE FUNCTION charge_events_outbox();
