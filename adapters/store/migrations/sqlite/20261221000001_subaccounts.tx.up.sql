-- Sub-accounts of platforms (marketplaces): an account whose
-- parent_account_id names its platform, with a contact e-mail, an optional
-- payout Pix key (type and normalised value) and the time the platform
-- disabled it. NULL / empty for every other account.
ALTER TABLE accounts ADD COLUMN parent_account_id TEXT REFERENCES accounts (id);
ALTER TABLE accounts ADD COLUMN email TEXT NOT NULL DEFAULT '';
ALTER TABLE accounts ADD COLUMN payout_pix_key_type TEXT NOT NULL DEFAULT '';
ALTER TABLE accounts ADD COLUMN payout_pix_key TEXT NOT NULL DEFAULT '';
ALTER TABLE accounts ADD COLUMN disabled_at TEXT CHECK (length(disabled_at) = 27);
-- A platform's list, newest first.
CREATE INDEX IF NOT EXISTS accounts_parent_idx ON accounts (parent_account_id, created_at, id)
    WHERE parent_account_id IS NOT NULL;
