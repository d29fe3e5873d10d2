-- Per-account fee overrides by payment method (the process-wide schedule
-- applies to methods without a row).
CREATE TABLE IF NOT EXISTS account_fees (
    account_id     text        NOT NULL,
    method         text        NOT NULL,
    provider_bps   bigint      NOT NULL CHECK (provider_bps BETWEEN 0 AND 10000),
    provider_fixed bigint      NOT NULL CHECK (provider_fixed >= 0),
    platform_bps   bigint      NOT NULL CHECK (platform_bps BETWEEN 0 AND 10000),
    platform_fixed bigint      NOT NULL CHECK (platform_fixed >= 0),
    updated_at     timestamptz NOT NULL,
    PRIMARY KEY (account_id, method)
);

-- Charges whose non-Pix method data the acquirer has not produced yet:
-- filled asynchronously after create, and by a recovery worker after a
-- crash.
ALTER TABLE charges ADD COLUMN methods_pending boolean NOT NULL DEFAULT false;

CREATE INDEX IF NOT EXISTS charges_methods_pending_idx
    ON charges (created_at, id) WHERE methods_pending;
