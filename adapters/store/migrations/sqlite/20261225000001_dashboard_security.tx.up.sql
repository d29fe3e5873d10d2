-- The dashboard sessions a user lists and ends: one row per session token
-- issued (jti), with its issue time (whole seconds, as the token holds
-- it), expiry, when a request last used it (to the minute), the login's
-- User-Agent (at most 256 bytes) and its client address masked (a /24 or a
-- /48). Ending a session denies its jti in revoked_tokens; the row stays
-- until it expires. The PostgreSQL variant has the same name.
CREATE TABLE IF NOT EXISTS dashboard_sessions (
    jti          TEXT NOT NULL PRIMARY KEY,
    user_id      TEXT NOT NULL,
    created_at   TEXT NOT NULL CHECK (length(created_at) = 27),
    expires_at   TEXT NOT NULL CHECK (length(expires_at) = 27),
    last_seen_at TEXT NOT NULL CHECK (length(last_seen_at) = 27),
    user_agent   TEXT NOT NULL DEFAULT '',
    client       TEXT NOT NULL DEFAULT ''
) STRICT;
-- A user's sessions, newest first.
CREATE INDEX IF NOT EXISTS dashboard_sessions_user_idx ON dashboard_sessions (user_id, created_at);
-- Housekeeping deletes the rows of expired sessions.
CREATE INDEX IF NOT EXISTS dashboard_sessions_expiry_idx ON dashboard_sessions (expires_at);

-- A dashboard user's TOTP second factor: the active secret ('' while off,
-- sealed:v1:… when QUITA_MASTER_KEY is set), when it was turned on, a
-- secret being set up and not yet confirmed with a code, and the 30-second
-- step of the last code accepted (a code is accepted once).
CREATE TABLE IF NOT EXISTS user_second_factors (
    user_id        TEXT    NOT NULL PRIMARY KEY REFERENCES users (id),
    totp_secret    TEXT    NOT NULL DEFAULT '',
    enabled_at     TEXT    CHECK (length(enabled_at) = 27),
    pending_secret TEXT    NOT NULL DEFAULT '',
    pending_at     TEXT    CHECK (length(pending_at) = 27),
    last_step      INTEGER NOT NULL DEFAULT 0
) STRICT;

-- The recovery codes of a user with TOTP, each the SHA-256 (hex) of the
-- user id and the code (the codes are shown once and never stored), used
-- once.
CREATE TABLE IF NOT EXISTS user_recovery_codes (
    user_id    TEXT NOT NULL REFERENCES users (id),
    code_hash  TEXT NOT NULL,
    created_at TEXT NOT NULL CHECK (length(created_at) = 27),
    used_at    TEXT CHECK (length(used_at) = 27),
    PRIMARY KEY (user_id, code_hash)
) STRICT;
