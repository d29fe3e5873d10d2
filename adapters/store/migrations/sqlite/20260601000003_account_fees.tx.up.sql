-- Per-account fee overrides by payment method (the process-wide schedule
-- applies to methods without a row).
CREATE TABLE IF NOT EXISTS account_fees (
    account_id     TEXT    NOT NULL,
    method         TEXT    NOT NULL,
    provider_bps   INTEGER NOT NULL CHECK (provider_bps BETWEEN 0 AND 10000),
    provider_fixed INTEGER NOT NULL CHECK (provider_fixed >= 0),
    platform_bps   INTEGER NOT NULL CHECK (platform_bps BETWEEN 0 AND 10000),
    platform_fixed INTEGER NOT NULL CHECK (platform_fixed >= 0),
    updated_at     TEXT    NOT NULL CHECK (length(updated_at) = 27),
    PRIMARY KEY (account_id, method)
) STRICT;

-- Charges whose non-Pix method data the acquirer has not produced yet.
ALTER TABLE charges ADD COLUMN methods_pending INTEGER NOT NULL DEFAULT 0 CHECK (methods_pending IN (0, 1));

CREATE INDEX IF NOT EXISTS charges_methods_pending_idx
    ON charges (created_at, id) WHERE methods_pending = 1;
