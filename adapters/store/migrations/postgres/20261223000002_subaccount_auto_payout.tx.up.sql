-- Automatic daily payouts of sub-accounts: the switch, and the Brasília
-- day (YYYY-MM-DD) of the last automatic payout pass that handled the
-- sub-account ('' before the first), so the worker reads only the
-- sub-accounts still due today.
ALTER TABLE accounts ADD COLUMN auto_payout boolean NOT NULL DEFAULT false;
ALTER TABLE accounts ADD COLUMN auto_payout_day text NOT NULL DEFAULT '';
CREATE INDEX IF NOT EXISTS accounts_auto_payout_idx ON accounts (id) WHERE auto_payout = true;
