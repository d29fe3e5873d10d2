-- Automatic Pix returns (devoluções) Quita owes payers: a payer-lock
-- mismatch, a wrong amount, a Pix for a closed charge, a cancelled hold.
-- One row per Pix returned, followed until the payer's bank confirms it
-- (RETURNED) or refuses every attempt (FAILED: an operator must act). An
-- attempt the payer's bank refuses is asked again under a new devolução id
-- (attempt), derived from the end-to-end id, so a retry after a crash is
-- the same devolução. The SQLite variant has the same name.
CREATE TABLE IF NOT EXISTS pix_returns (
    end_to_end_id text        PRIMARY KEY,
    account_id    text        NOT NULL,
    mode          text        NOT NULL CHECK (mode IN ('live', 'test')),
    charge_id     text        NOT NULL,
    amount        bigint      NOT NULL CHECK (amount > 0),
    reason        text        NOT NULL,
    status        text        NOT NULL CHECK (status IN ('REQUESTED', 'IN_PROGRESS', 'RETURNED', 'FAILED')),
    attempt       integer     NOT NULL CHECK (attempt >= 1),
    provider_ref  text        NOT NULL DEFAULT '',
    failure       text        NOT NULL DEFAULT '',
    -- When a worker looks at it next; also its lease while one does.
    due_at        timestamptz,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL
);

CREATE INDEX IF NOT EXISTS pix_returns_open_idx ON pix_returns (due_at, end_to_end_id)
    WHERE status IN ('REQUESTED', 'IN_PROGRESS');
CREATE INDEX IF NOT EXISTS pix_returns_status_idx ON pix_returns (status, created_at, end_to_end_id);
CREATE INDEX IF NOT EXISTS pix_returns_charge_idx ON pix_returns (charge_id);

-- Returns charges owed before: those still requested are sent again (the
-- first attempt's id is the one used so far, so one the PSP already has is
-- not sent twice), and those recorded done on the PSP's mere acceptance
-- are asked about, so one the payer's bank refused is retried or surfaced.
-- Returns of wrong amounts and of closed charges were not recorded before.
INSERT INTO pix_returns (end_to_end_id, account_id, mode, charge_id, amount, reason, status, attempt, created_at, updated_at)
SELECT settlement_end_to_end_id, account_id, mode, id, settlement_amount,
       CASE WHEN status = 'CANCELLED' THEN 'cancelled_hold' ELSE 'payer_mismatch' END,
       CASE WHEN return_state = 'requested' THEN 'REQUESTED' ELSE 'IN_PROGRESS' END,
       1, updated_at, updated_at
FROM charges
WHERE return_state IN ('requested', 'done') AND settlement_end_to_end_id IS NOT NULL
  AND settlement_end_to_end_id <> '' AND settlement_amount > 0
ON CONFLICT (end_to_end_id) DO NOTHING;
