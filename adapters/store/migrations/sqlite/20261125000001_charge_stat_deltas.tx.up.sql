-- Changes to the charge counters, folded into charge_counts and
-- charge_day_totals by a worker (see the Postgres variant). id is the
-- rowid: the fold reads and deletes up to the highest it saw.
CREATE TABLE IF NOT EXISTS charge_stat_deltas (
    id         INTEGER PRIMARY KEY,
    account_id TEXT    NOT NULL,
    mode       TEXT    NOT NULL,
    day        TEXT    NOT NULL,
    currency   TEXT    NOT NULL,
    status     TEXT    NOT NULL,
    paid_with  TEXT    NOT NULL,
    n          INTEGER NOT NULL,
    volume     INTEGER NOT NULL,
    refunded   INTEGER NOT NULL
) STRICT;
