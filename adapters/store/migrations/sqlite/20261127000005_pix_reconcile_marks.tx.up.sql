-- How far each account's received Pix are reconciled: the end of the last
-- window whose every Pix the PSP listed was read and applied. After an
-- outage of the PSP or of the account's credentials, the next pass reads
-- from here rather than only the last two hours (docs/bcbpix.md,
-- "Reconciliation"). It only moves forward. SQLite variant.
CREATE TABLE IF NOT EXISTS pix_reconcile_marks (
    account_id         TEXT NOT NULL PRIMARY KEY REFERENCES accounts (id),
    reconciled_through TEXT NOT NULL CHECK (length(reconciled_through) = 27)
) STRICT;
