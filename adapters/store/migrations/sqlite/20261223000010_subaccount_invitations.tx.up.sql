-- Invitations a platform sends for dashboard logins of its sub-accounts:
-- the sub-account, its platform, the login's e-mail, the SHA-256 (hex) of
-- the link's token (the token itself is never stored), when it expires
-- and when and by which user it was accepted (once). The PostgreSQL
-- variant has the same name.
CREATE TABLE IF NOT EXISTS subaccount_invitations (
    id          TEXT NOT NULL PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts (id),
    platform_id TEXT NOT NULL REFERENCES accounts (id),
    email       TEXT NOT NULL,
    token_hash  TEXT NOT NULL,
    created_at  TEXT NOT NULL CHECK (length(created_at) = 27),
    expires_at  TEXT NOT NULL CHECK (length(expires_at) = 27),
    accepted_at TEXT CHECK (length(accepted_at) = 27),
    user_id     TEXT NOT NULL DEFAULT '',
    CONSTRAINT subaccount_invitations_token_unique UNIQUE (token_hash)
) STRICT;
-- A sub-account's invitations, newest first.
CREATE INDEX IF NOT EXISTS subaccount_invitations_account_idx
    ON subaccount_invitations (account_id, created_at, id);
