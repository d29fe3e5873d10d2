-- The merchant's CPF or CNPJ (normalised, check digits verified by the
-- app), printed masked as the payee's document on receipts (issue 15).
-- Empty for accounts created before it: their receipts omit the line.
ALTER TABLE accounts ADD COLUMN document text NOT NULL DEFAULT '';
