-- The link of a subscription's charge (Pix Automático) to its cycle.
-- Frozen once released; the PostgreSQL variant has the same name.
-- A subscription's charge: the cycle it collects (0 for the first
-- payment) and that cycle's due date; NULL for any other charge. At most
-- one charge per (subscription, cycle).
ALTER TABLE charges ADD COLUMN subscription_id TEXT;
ALTER TABLE charges ADD COLUMN subscription_cycle INTEGER;
ALTER TABLE charges ADD COLUMN subscription_due_date TEXT;
CREATE UNIQUE INDEX IF NOT EXISTS charges_subscription_cycle_idx ON charges (subscription_id, subscription_cycle)
    WHERE subscription_id IS NOT NULL;
