-- The dashboard lists an account's refunds across its charges, newest
-- first, and a charge's webhook deliveries on its detail page.
CREATE INDEX IF NOT EXISTS refunds_scope_idx
    ON refunds (account_id, mode, created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS webhook_deliveries_charge_idx
    ON webhook_deliveries (account_id, mode, charge_id, created_at DESC);
