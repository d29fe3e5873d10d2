-- Invitations a platform sends for dashboard logins of its sub-accounts:
-- the sub-account, its platform, the login's e-mail, the SHA-256 (hex) of
-- the link's token (the token itself is never stored), when it expires
-- and when and by which user it was accepted (once). The SQLite variant
-- has the same name.
CREATE TABLE IF NOT EXISTS subaccount_invitations (
    id          text        NOT NULL PRIMARY KEY,
    account_id  text        NOT NULL REFERENCES accounts (id),
    platform_id text        NOT NULL REFERENCES accounts (id),
    email       text        NOT NULL,
    token_hash  text        NOT NULL,
    created_at  timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,
    accepted_at timestamptz,
    user_id     text        NOT NULL DEFAULT '',
    CONSTRAINT subaccount_invitations_token_unique UNIQUE (token_hash)
);
-- A sub-account's invitations, newest first.
CREATE INDEX IF NOT EXISTS subaccount_invitations_account_idx
    ON subaccount_invitations (account_id, created_at, id);
