-- "Log out everywhere": a user's session tokens issued at or before
-- not_before are refused, whatever their jti.
CREATE TABLE IF NOT EXISTS session_cutoffs (
    user_id    TEXT PRIMARY KEY,
    not_before TEXT NOT NULL CHECK (length(not_before) = 27)
) STRICT;
