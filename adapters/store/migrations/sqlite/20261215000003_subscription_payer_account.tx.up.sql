-- A subscription's payer account (where an authorization_request's
-- request goes: the API Pix's solicrec.destinatario), '' when the merchant
-- named none; and the lookup of a subscription by its rec, which the PSP's
-- webhookrec callbacks name. The PostgreSQL variant has the same name.
ALTER TABLE subscriptions ADD COLUMN payer_ispb TEXT NOT NULL DEFAULT '';
ALTER TABLE subscriptions ADD COLUMN payer_branch TEXT NOT NULL DEFAULT '';
ALTER TABLE subscriptions ADD COLUMN payer_account_number TEXT NOT NULL DEFAULT '';
CREATE INDEX IF NOT EXISTS subscriptions_rec_idx ON subscriptions (rec_id) WHERE rec_id <> '';
