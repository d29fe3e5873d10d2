-- Whether the account's cashout refunds may go only to the payer's own
-- document (a CPF/CNPJ key equal to the document the payer's bank
-- disclosed). NULL leaves it to the default: on in live mode, off in test
-- mode.
ALTER TABLE account_settings ADD COLUMN cashout_payer_only boolean;
