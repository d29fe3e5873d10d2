-- The merchant's debt: what disputes (MED returns) took that the wallet
-- could not cover, the negated balance of the merchant_owed ledger
-- account. Credits to the merchant pay it first.
ALTER TABLE wallet_balances ADD COLUMN owed INTEGER NOT NULL DEFAULT 0 CHECK (owed >= 0);

-- The returns the payer's PSP made from a charge's credited Pix without
-- Quita asking (MED), as a JSON array, oldest first; NULL when none.
ALTER TABLE charges ADD COLUMN disputes TEXT;
