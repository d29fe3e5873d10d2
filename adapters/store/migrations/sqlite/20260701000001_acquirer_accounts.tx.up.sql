-- Per-account provider configuration (API Pix PSP credentials and
-- certificates). sealed is AES-GCM ciphertext under QUITA_MASTER_KEY: the
-- database never holds them in clear. SQLite variant.
CREATE TABLE IF NOT EXISTS acquirer_accounts (
    account_id  TEXT NOT NULL REFERENCES accounts (id),
    provider    TEXT NOT NULL,
    sealed      BLOB NOT NULL,
    created_at  TEXT NOT NULL CHECK (length(created_at) = 27),
    updated_at  TEXT NOT NULL CHECK (length(updated_at) = 27),
    PRIMARY KEY (account_id, provider)
) STRICT;

CREATE INDEX IF NOT EXISTS acquirer_accounts_provider_idx
    ON acquirer_accounts (provider, account_id);
