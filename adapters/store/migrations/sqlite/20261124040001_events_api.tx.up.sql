-- The events API (issue 14 item 3) lists an account's events per mode in
-- write order, and housekeeping deletes events older than 30 days.
CREATE INDEX IF NOT EXISTS charge_events_scope_seq_idx ON charge_events (account_id, mode, seq);
CREATE INDEX IF NOT EXISTS charge_events_created_idx ON charge_events (created_at);
