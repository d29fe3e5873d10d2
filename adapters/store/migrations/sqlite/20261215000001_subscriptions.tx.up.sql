-- Subscriptions (Pix Automático): a payer's mandate (the API Pix's rec)
-- and its schedule, and one row per cycle (the cobr); the charge that
-- collects a cycle is linked to it by 20261215000002. The PostgreSQL variant has the
-- same name.
CREATE TABLE IF NOT EXISTS subscriptions (
    id                       TEXT    NOT NULL PRIMARY KEY,
    account_id               TEXT    NOT NULL,
    mode                     TEXT    NOT NULL CHECK (mode IN ('live', 'test')),
    status                   TEXT    NOT NULL CHECK (status IN ('pending_authorization', 'active', 'rejected', 'expired', 'cancelled', 'completed')),
    cancelled_by             TEXT    NOT NULL DEFAULT '' CHECK (cancelled_by IN ('', 'merchant', 'payer')),
    customer_name            TEXT    NOT NULL,
    customer_document        TEXT    NOT NULL,
    amount                   INTEGER NOT NULL CHECK (amount >= 0),
    variable                 INTEGER NOT NULL CHECK (variable IN (0, 1)),
    max_amount               INTEGER NOT NULL DEFAULT 0 CHECK (max_amount >= 0),
    cycle_interval           TEXT    NOT NULL,
    start_date               TEXT    NOT NULL,
    end_date                 TEXT    NOT NULL DEFAULT '',
    contract                 TEXT    NOT NULL,
    description              TEXT    NOT NULL DEFAULT '',
    retry_policy             TEXT    NOT NULL,
    journey                  TEXT    NOT NULL,
    first_payment            INTEGER NOT NULL DEFAULT 0 CHECK (first_payment >= 0),
    first_charge_id          TEXT    NOT NULL DEFAULT '',
    rec_id                   TEXT    NOT NULL DEFAULT '',
    rec_status               TEXT    NOT NULL,
    solicrec_id              TEXT    NOT NULL DEFAULT '',
    solicrec_status          TEXT    NOT NULL DEFAULT '',
    br_code                  TEXT    NOT NULL DEFAULT '',
    location                 TEXT    NOT NULL DEFAULT '',
    authorization_expires_at TEXT    NOT NULL CHECK (length(authorization_expires_at) = 27),
    next_cycle               INTEGER NOT NULL CHECK (next_cycle >= 1),
    next_amount              INTEGER NOT NULL DEFAULT 0 CHECK (next_amount >= 0),
    cycles_open              INTEGER NOT NULL DEFAULT 0 CHECK (cycles_open >= 0),
    cycles_paid              INTEGER NOT NULL DEFAULT 0,
    cycles_failed            INTEGER NOT NULL DEFAULT 0,
    cycles_skipped           INTEGER NOT NULL DEFAULT 0,
    latest_cycle             TEXT,
    next_run_at              TEXT    CHECK (length(next_run_at) = 27),
    created_at               TEXT    NOT NULL CHECK (length(created_at) = 27),
    updated_at               TEXT    NOT NULL CHECK (length(updated_at) = 27),
    authorized_at            TEXT    CHECK (length(authorized_at) = 27),
    cancelled_at             TEXT    CHECK (length(cancelled_at) = 27),
    ended_at                 TEXT    CHECK (length(ended_at) = 27)
) STRICT;

CREATE INDEX IF NOT EXISTS subscriptions_list_idx ON subscriptions (account_id, mode, created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS subscriptions_due_idx ON subscriptions (next_run_at, id)
    WHERE status IN ('pending_authorization', 'active') AND next_run_at IS NOT NULL;

CREATE TABLE IF NOT EXISTS subscription_cycles (
    subscription_id TEXT    NOT NULL,
    cycle           INTEGER NOT NULL CHECK (cycle >= 1),
    account_id      TEXT    NOT NULL,
    mode            TEXT    NOT NULL CHECK (mode IN ('live', 'test')),
    charge_id       TEXT    NOT NULL UNIQUE,
    txid            TEXT    NOT NULL UNIQUE,
    due_date        TEXT    NOT NULL,
    amount          INTEGER NOT NULL CHECK (amount > 0),
    status          TEXT    NOT NULL CHECK (status IN ('CRIADA', 'ATIVA', 'CONCLUIDA', 'EXPIRADA', 'REJEITADA', 'CANCELADA')),
    retry_policy    TEXT    NOT NULL,
    attempts        TEXT    NOT NULL, -- JSON
    check_at        TEXT    CHECK (length(check_at) = 27),
    created_at      TEXT    NOT NULL CHECK (length(created_at) = 27),
    updated_at      TEXT    NOT NULL CHECK (length(updated_at) = 27),
    PRIMARY KEY (subscription_id, cycle)
) STRICT;

-- check_at: when the worker next looks at the cycle (also its lease): an
-- open one, or a closed one whose charge has yet to follow it; NULL once
-- nothing is left to do.
CREATE INDEX IF NOT EXISTS subscription_cycles_due_idx ON subscription_cycles (check_at, subscription_id, cycle)
    WHERE check_at IS NOT NULL;
