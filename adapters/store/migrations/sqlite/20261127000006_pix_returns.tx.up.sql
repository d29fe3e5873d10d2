-- Automatic Pix returns (devoluções) Quita owes payers; see the PostgreSQL
-- variant of the same name for the why.
CREATE TABLE IF NOT EXISTS pix_returns (
    end_to_end_id TEXT    NOT NULL PRIMARY KEY,
    account_id    TEXT    NOT NULL,
    mode          TEXT    NOT NULL CHECK (mode IN ('live', 'test')),
    charge_id     TEXT    NOT NULL,
    amount        INTEGER NOT NULL CHECK (amount > 0),
    reason        TEXT    NOT NULL,
    status        TEXT    NOT NULL CHECK (status IN ('REQUESTED', 'IN_PROGRESS', 'RETURNED', 'FAILED')),
    attempt       INTEGER NOT NULL CHECK (attempt >= 1),
    provider_ref  TEXT    NOT NULL DEFAULT '',
    failure       TEXT    NOT NULL DEFAULT '',
    due_at        TEXT    CHECK (length(due_at) = 27),
    created_at    TEXT    NOT NULL CHECK (length(created_at) = 27),
    updated_at    TEXT    NOT NULL CHECK (length(updated_at) = 27)
) STRICT;

CREATE INDEX IF NOT EXISTS pix_returns_open_idx ON pix_returns (due_at, end_to_end_id)
    WHERE status IN ('REQUESTED', 'IN_PROGRESS');
CREATE INDEX IF NOT EXISTS pix_returns_status_idx ON pix_returns (status, created_at, end_to_end_id);
CREATE INDEX IF NOT EXISTS pix_returns_charge_idx ON pix_returns (charge_id);

INSERT INTO pix_returns (end_to_end_id, account_id, mode, charge_id, amount, reason, status, attempt, created_at, updated_at)
SELECT settlement_end_to_end_id, account_id, mode, id, settlement_amount,
       CASE WHEN status = 'CANCELLED' THEN 'cancelled_hold' ELSE 'payer_mismatch' END,
       CASE WHEN return_state = 'requested' THEN 'REQUESTED' ELSE 'IN_PROGRESS' END,
       1, updated_at, updated_at
FROM charges
WHERE return_state IN ('requested', 'done') AND settlement_end_to_end_id IS NOT NULL
  AND settlement_end_to_end_id <> '' AND settlement_amount > 0
ON CONFLICT (end_to_end_id) DO NOTHING;
