-- Automatic daily payouts of sub-accounts: the switch, and the Brasília
-- day (YYYY-MM-DD) of the last automatic payout pass that handled the
-- sub-account ('' before the first), so the worker reads only the
-- sub-accounts still due today.
ALTER TABLE accounts ADD COLUMN auto_payout INTEGER NOT NULL DEFAULT 0 CHECK (auto_payout IN (0, 1));
ALTER TABLE accounts ADD COLUMN auto_payout_day TEXT NOT NULL DEFAULT '';
CREATE INDEX IF NOT EXISTS accounts_auto_payout_idx ON accounts (id) WHERE auto_payout = 1;
