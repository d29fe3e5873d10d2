-- Per-account provider configuration (API Pix PSP credentials and
-- certificates). sealed is AES-GCM ciphertext under QUITA_MASTER_KEY: the
-- database never holds them in clear. PostgreSQL variant.
CREATE TABLE IF NOT EXISTS acquirer_accounts (
    account_id  text        NOT NULL REFERENCES accounts (id),
    provider    text        NOT NULL,
    sealed      bytea       NOT NULL,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    PRIMARY KEY (account_id, provider)
);

CREATE INDEX IF NOT EXISTS acquirer_accounts_provider_idx
    ON acquirer_accounts (provider, account_id);
