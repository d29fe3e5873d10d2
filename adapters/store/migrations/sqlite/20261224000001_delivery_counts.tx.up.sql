-- The deliveries list's total without counting the deliveries: see the
-- PostgreSQL variant, which has the same name. SQLite's triggers run per
-- row.
CREATE TABLE IF NOT EXISTS delivery_counts (
    account_id  TEXT    NOT NULL,
    mode        TEXT    NOT NULL,
    endpoint_id TEXT    NOT NULL,
    event_type  TEXT    NOT NULL,
    n           INTEGER NOT NULL CHECK (n >= 0),
    PRIMARY KEY (account_id, mode, endpoint_id, event_type)
) STRICT;

INSERT INTO delivery_counts (account_id, mode, endpoint_id, event_type, n)
SELECT account_id, mode, endpoint_id, event_type, count(*)
FROM webhook_deliveries WHERE true GROUP BY account_id, mode, endpoint_id, event_type
ON CONFLICT (account_id, mode, endpoint_id, event_type) DO UPDATE SET n = excluded.n;

CREATE TRIGGER IF NOT EXISTS webhook_deliveries_count_add AFTER INSERT ON webhook_deliveries
BEGIN
    INSERT INTO delivery_counts (account_id, mode, endpoint_id, event_type, n)
    VALUES (NEW.account_id, NEW.mode, NEW.endpoint_id, NEW.event_type, 1)
    ON CONFLICT (account_id, mode, endpoint_id, event_type) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER IF NOT EXISTS webhook_deliveries_count_subtract AFTER DELETE ON webhook_deliveries
BEGIN
    UPDATE delivery_counts SET n = n - 1
    WHERE account_id = OLD.account_id AND mode = OLD.mode AND endpoint_id = OLD.endpoint_id AND event_type = OLD.event_type;
END;

CREATE INDEX IF NOT EXISTS webhook_deliveries_undelivered_idx
    ON webhook_deliveries (account_id, mode, status, created_at, id, endpoint_id, event_type)
    WHERE status <> 'DELIVERED';
