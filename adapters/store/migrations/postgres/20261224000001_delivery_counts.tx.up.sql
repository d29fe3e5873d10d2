-- The deliveries list's total without counting the deliveries
-- (adapters/store/delivery_counts.go; docs/performance.md, "The
-- deliveries list's total").
--
-- delivery_counts holds, per account, mode, endpoint ('' for a charge's
-- webhookUrl) and event type, how many deliveries there are. Triggers
-- keep it in the transaction of every statement that inserts or deletes
-- deliveries, whatever process runs it (an older quitad's dispatcher
-- during an upgrade too); the four columns never change once a delivery
-- is written. A total with neither a status nor a charge filter is the
-- sum of a few of these rows.
CREATE TABLE IF NOT EXISTS delivery_counts (
    account_id  text   NOT NULL,
    mode        text   NOT NULL,
    endpoint_id text   NOT NULL,
    event_type  text   NOT NULL,
    n           bigint NOT NULL CHECK (n >= 0),
    PRIMARY KEY (account_id, mode, endpoint_id, event_type)
);

-- One upsert per statement, its rows in key order: two dispatchers adding
-- to the same rows wait on each other in one order, never in a cycle.
CREATE OR REPLACE FUNCTION delivery_counts_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO delivery_counts AS dc (account_id, mode, endpoint_id, event_type, n)
    SELECT account_id, mode, endpoint_id, event_type, count(*) FROM new_deliveries
    GROUP BY account_id, mode, endpoint_id, event_type ORDER BY account_id, mode, endpoint_id, event_type
    ON CONFLICT (account_id, mode, endpoint_id, event_type) DO UPDATE SET n = dc.n + EXCLUDED.n;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION delivery_counts_subtract() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE delivery_counts AS dc SET n = dc.n - o.n
    FROM (SELECT account_id, mode, endpoint_id, event_type, count(*) AS n FROM old_deliveries
          GROUP BY account_id, mode, endpoint_id, event_type) AS o
    WHERE dc.account_id = o.account_id AND dc.mode = o.mode AND dc.endpoint_id = o.endpoint_id AND dc.event_type = o.event_type;
    RETURN NULL;
END
$$;

-- The counts as of this transaction: the table is locked from here to
-- the commit (an insert waits), so the triggers go on from exactly them.
LOCK TABLE webhook_deliveries IN SHARE MODE;

INSERT INTO delivery_counts (account_id, mode, endpoint_id, event_type, n)
SELECT account_id, mode, endpoint_id, event_type, count(*)
FROM webhook_deliveries GROUP BY account_id, mode, endpoint_id, event_type
ON CONFLICT (account_id, mode, endpoint_id, event_type) DO UPDATE SET n = EXCLUDED.n;

DROP TRIGGER IF EXISTS webhook_deliveries_count_add ON webhook_deliveries;
CREATE TRIGGER webhook_deliveries_count_add AFTER INSERT ON webhook_deliveries
    REFERENCING NEW TABLE AS new_deliveries FOR EACH STATEMENT EXECUTE FUNCTION delivery_counts_add();
DROP TRIGGER IF EXISTS webhook_deliveries_count_subtract ON webhook_deliveries;
CREATE TRIGGER webhook_deliveries_count_subtract AFTER DELETE ON webhook_deliveries
    REFERENCING OLD TABLE AS old_deliveries FOR EACH STATEMENT EXECUTE FUNCTION delivery_counts_subtract();

-- The deliveries not DELIVERED, newest first per status: a page filtered
-- by such a status walks it, and a total of one (or the stats) counts its
-- entries alone, bounded by the account's deliveries not delivered;
-- DELIVERED is the counter less these. On a large webhook_deliveries,
-- build it first with CREATE INDEX CONCURRENTLY under this name (the
-- migration then leaves it alone).
CREATE INDEX IF NOT EXISTS webhook_deliveries_undelivered_idx
    ON webhook_deliveries (account_id, mode, status, created_at, id) INCLUDE (endpoint_id, event_type)
    WHERE status <> 'DELIVERED';
