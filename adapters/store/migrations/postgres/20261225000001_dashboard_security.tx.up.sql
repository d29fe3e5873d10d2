-- The dashboard sessions a user lists and ends: one row per session token
-- issued (jti), with its issue time (whole seconds, as the token holds
-- it), expiry, when a request last used it (to the minute), the login's
-- User-Agent (at most 256 bytes) and its client address masked (a /24 or a
-- /48). Ending a session denies its jti in revoked_tokens; the row stays
-- until it expires. The SQLite variant has the same name.
CREATE TABLE IF NOT EXISTS dashboard_sessions (
    jti          text        NOT NULL PRIMARY KEY,
    user_id      text        NOT NULL,
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL,
    user_agent   text        NOT NULL DEFAULT '',
    client       text        NOT NULL DEFAULT ''
);
-- A user's sessions, newest first.
CREATE INDEX IF NOT EXISTS dashboard_sessions_user_idx ON dashboard_sessions (user_id, created_at);
-- Housekeeping deletes the rows of expired sessions.
CREATE INDEX IF NOT EXISTS dashboard_sessions_expiry_idx ON dashboard_sessions (expires_at);

-- A dashboard user's TOTP second factor: the active secret ('' while off,
-- sealed:v1:… when QUITA_MASTER_KEY is set), when it was turned on, a
-- secret being set up and not yet confirmed with a code, and the 30-second
-- step of the last code accepted (a code is accepted once).
CREATE TABLE IF NOT EXISTS user_second_factors (
    user_id        text        NOT NULL PRIMARY KEY REFERENCES users (id),
    totp_secret    text        NOT NULL DEFAULT '',
    enabled_at     timestamptz,
    pending_secret text        NOT NULL DEFAULT '',
    pending_at     timestamptz,
    last_step      bigint      NOT NULL DEFAULT 0
);

-- The recovery codes of a user with TOTP, each the SHA-256 (hex) of the
-- user id and the code (the codes are shown once and never stored), used
-- once.
CREATE TABLE IF NOT EXISTS user_recovery_codes (
    user_id    text        NOT NULL REFERENCES users (id),
    code_hash  text        NOT NULL,
    created_at timestamptz NOT NULL,
    used_at    timestamptz,
    PRIMARY KEY (user_id, code_hash)
);
