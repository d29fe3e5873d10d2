-- Subscriptions (Pix Automático): a payer's mandate (the API Pix's rec)
-- and its schedule, and one row per cycle (the cobr); the charge that
-- collects a cycle is linked to it by 20261215000002. The SQLite variant has the
-- same name.
CREATE TABLE IF NOT EXISTS subscriptions (
    id                       text        PRIMARY KEY,
    account_id               text        NOT NULL,
    mode                     text        NOT NULL CHECK (mode IN ('live', 'test')),
    status                   text        NOT NULL CHECK (status IN ('pending_authorization', 'active', 'rejected', 'expired', 'cancelled', 'completed')),
    cancelled_by             text        NOT NULL DEFAULT '' CHECK (cancelled_by IN ('', 'merchant', 'payer')),
    customer_name            text        NOT NULL,
    customer_document        text        NOT NULL,
    amount                   bigint      NOT NULL CHECK (amount >= 0),
    variable                 boolean     NOT NULL,
    max_amount               bigint      NOT NULL DEFAULT 0 CHECK (max_amount >= 0),
    cycle_interval           text        NOT NULL,
    -- Civil dates in Brasília, YYYY-MM-DD; end_date '' when there is none.
    start_date               text        NOT NULL,
    end_date                 text        NOT NULL DEFAULT '',
    contract                 text        NOT NULL,
    description              text        NOT NULL DEFAULT '',
    retry_policy             text        NOT NULL,
    journey                  text        NOT NULL,
    first_payment            bigint      NOT NULL DEFAULT 0 CHECK (first_payment >= 0),
    first_charge_id          text        NOT NULL DEFAULT '',
    rec_id                   text        NOT NULL DEFAULT '',
    rec_status               text        NOT NULL,
    solicrec_id              text        NOT NULL DEFAULT '',
    solicrec_status          text        NOT NULL DEFAULT '',
    br_code                  text        NOT NULL DEFAULT '',
    location                 text        NOT NULL DEFAULT '',
    authorization_expires_at timestamptz NOT NULL,
    next_cycle               integer     NOT NULL CHECK (next_cycle >= 1),
    next_amount              bigint      NOT NULL DEFAULT 0 CHECK (next_amount >= 0),
    cycles_open              integer     NOT NULL DEFAULT 0 CHECK (cycles_open >= 0),
    cycles_paid              integer     NOT NULL DEFAULT 0,
    cycles_failed            integer     NOT NULL DEFAULT 0,
    cycles_skipped           integer     NOT NULL DEFAULT 0,
    -- The cycle changed last (JSON), NULL before the first.
    latest_cycle             text,
    -- When the worker next looks at it (also its lease); NULL: nothing is
    -- due by the clock.
    next_run_at              timestamptz,
    created_at               timestamptz NOT NULL,
    updated_at               timestamptz NOT NULL,
    authorized_at            timestamptz,
    cancelled_at             timestamptz,
    ended_at                 timestamptz
);

CREATE INDEX IF NOT EXISTS subscriptions_list_idx ON subscriptions (account_id, mode, created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS subscriptions_due_idx ON subscriptions (next_run_at, id)
    WHERE status IN ('pending_authorization', 'active') AND next_run_at IS NOT NULL;

-- One row per cycle: its primary key is the one charge a cycle may have.
CREATE TABLE IF NOT EXISTS subscription_cycles (
    subscription_id text        NOT NULL,
    cycle           integer     NOT NULL CHECK (cycle >= 1),
    account_id      text        NOT NULL,
    mode            text        NOT NULL CHECK (mode IN ('live', 'test')),
    charge_id       text        NOT NULL UNIQUE,
    txid            text        NOT NULL UNIQUE,
    due_date        text        NOT NULL,
    amount          bigint      NOT NULL CHECK (amount > 0),
    status          text        NOT NULL CHECK (status IN ('CRIADA', 'ATIVA', 'CONCLUIDA', 'EXPIRADA', 'REJEITADA', 'CANCELADA')),
    retry_policy    text        NOT NULL,
    attempts        text        NOT NULL, -- JSON
    check_at        timestamptz,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    PRIMARY KEY (subscription_id, cycle)
);

-- check_at: when the worker next looks at the cycle (also its lease): an
-- open one, or a closed one whose charge has yet to follow it; NULL once
-- nothing is left to do.
CREATE INDEX IF NOT EXISTS subscription_cycles_due_idx ON subscription_cycles (check_at, subscription_id, cycle)
    WHERE check_at IS NOT NULL;
