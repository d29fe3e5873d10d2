-- A platform's charge shared among its sub-accounts: the fee payer and
-- each split's sub-account with its fixed amount or percent, as JSON;
-- NULL for any other charge.
ALTER TABLE charges ADD COLUMN splits TEXT;
