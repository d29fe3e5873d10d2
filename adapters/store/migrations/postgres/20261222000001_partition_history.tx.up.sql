-- The append-only history — charge_events and request_logs — is
-- partitioned by month of created_at (UTC), so retention drops a month
-- whole instead of deleting its rows one by one (docs/performance.md,
-- "History by month"; docs/decisions.md, "History tables are partitioned
-- by month"). Each table keeps a DEFAULT partition for a row outside every
-- month made so far; quita_month_partition moves such rows into the month's
-- partition when it makes it.

-- quita_month_partition makes parent's partition of the month that
-- begins at month (UTC), named <parent>_pYYYYMM, unless it exists: rows
-- of that month already in <parent>_default move into it first.
CREATE OR REPLACE FUNCTION quita_month_partition(parent text, month date) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    part text := parent || '_p' || to_char(month, 'YYYYMM');
    lo timestamptz := date_trunc('month', month)::timestamp AT TIME ZONE 'UTC';
    hi timestamptz := (date_trunc('month', month) + interval '1 month')::timestamp AT TIME ZONE 'UTC';
BEGIN
    IF to_regclass(part) IS NOT NULL THEN
        RETURN false;
    END IF;
    EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', part, parent);
    EXECUTE format('WITH moved AS (DELETE FROM %I WHERE created_at >= $1 AND created_at < $2 RETURNING *) INSERT INTO %I SELECT * FROM moved',
                   parent || '_default', part) USING lo, hi;
    EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', parent, part, lo, hi);
    RETURN true;
END
$$;

-- quita_month_partitions makes parent's partitions from the month of
-- since to the month ahead months after now, and reports how many it made.
CREATE OR REPLACE FUNCTION quita_month_partitions(parent text, since timestamptz, ahead int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    m date := date_trunc('month', least(since, now()) AT TIME ZONE 'UTC')::date;
    last date := date_trunc('month', (now() AT TIME ZONE 'UTC') + make_interval(months => ahead))::date;
    made int := 0;
BEGIN
    WHILE m <= last LOOP
        IF quita_month_partition(parent, m) THEN
            made := made + 1;
        END IF;
        m := (m + interval '1 month')::date;
    END LOOP;
    RETURN made;
END
$$;

-- charge_events: the rows move to the partitioned table under the same
-- seqs, and its identity goes on from the old one's.
ALTER TABLE charge_events RENAME TO charge_events_unparted;
DROP TRIGGER charge_events_outbox ON charge_events_unparted;
CREATE TABLE charge_events (LIKE charge_events_unparted INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING IDENTITY)
    PARTITION BY RANGE (created_at);
CREATE TABLE charge_events_default PARTITION OF charge_events DEFAULT;
SELECT quita_month_partitions('charge_events', coalesce((SELECT min(created_at) FROM charge_events_unparted), now()), 3);
INSERT INTO charge_events OVERRIDING SYSTEM VALUE SELECT * FROM charge_events_unparted;
DO $$
DECLARE
    last bigint;
    called boolean;
BEGIN
    EXECUTE format('SELECT last_value, is_called FROM %s', pg_get_serial_sequence('charge_events_unparted', 'seq')) INTO last, called;
    PERFORM setval(pg_get_serial_sequence('charge_events', 'seq'), last, called);
END
$$;
DROP TABLE charge_events_unparted;
-- A key of a partitioned table must hold the partition key: seq is unique
-- by its identity, and an event's id by its 130 random bits (the lookup
-- index below serves GET /v1/events/{id} in each partition).
ALTER TABLE charge_events ADD CONSTRAINT charge_events_pkey PRIMARY KEY (seq, created_at);
CREATE INDEX charge_events_id_idx ON charge_events (id);
CREATE INDEX charge_events_charge_idx ON charge_events (charge_id, seq);
CREATE INDEX charge_events_scope_seq_idx ON charge_events (account_id, mode, seq);
CREATE INDEX charge_events_twin_idx ON charge_events (twin_id) WHERE twin_id IS NOT NULL;
-- The rows of the month the retention's cut falls in are found by a BRIN
-- on created_at in each partition, as before the partitioning.
CREATE INDEX charge_events_created_brin ON charge_events USING brin (created_at) WITH (autosummarize = on);
CREATE TRIGGER charge_events_outbox AFTER INSERT ON charge_events
    REFERENCING NEW TABLE AS new_events FOR EACH STATEMENT EXECUTE FUNCTION charge_events_outbox();

-- request_logs: no key; a BRIN on created_at in each partition.
ALTER TABLE request_logs RENAME TO request_logs_unparted;
CREATE TABLE request_logs (LIKE request_logs_unparted INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
    PARTITION BY RANGE (created_at);
CREATE TABLE request_logs_default PARTITION OF request_logs DEFAULT;
SELECT quita_month_partitions('request_logs', coalesce((SELECT min(created_at) FROM request_logs_unparted), now()), 3);
INSERT INTO request_logs SELECT * FROM request_logs_unparted;
DROP TABLE request_logs_unparted;
CREATE INDEX request_logs_account_idx ON request_logs (account_id, created_at);
CREATE INDEX request_logs_key_idx ON request_logs (account_id, key_fingerprint, created_at);
CREATE INDEX request_logs_created_brin ON request_logs USING brin (created_at) WITH (autosummarize = on);
