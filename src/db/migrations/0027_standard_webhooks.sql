-- Standard Webhooks (standardwebhooks.com) beside Lumen's own signature. Per partner,
-- which signature headers a webhook carries: 'lumen' (X-Lumen-Signature, as before),
-- 'standard' (webhook-id, webhook-timestamp, webhook-signature) or 'both'. Partners
-- that exist keep 'lumen', so nothing changes for their receivers; partners created
-- from now on get 'both'.
ALTER TABLE external_system
  ADD COLUMN webhook_signature text NOT NULL DEFAULT 'lumen'
    CHECK (webhook_signature IN ('lumen', 'standard', 'both'));
ALTER TABLE external_system ALTER COLUMN webhook_signature SET DEFAULT 'both';

-- Secret rotation with overlap: the secret that was replaced keeps signing too (a second
-- signature) until webhook_previous_secret_until, then is dropped. Sealed like
-- webhook_secret_enc, with its own column bound as associated data.
ALTER TABLE external_system
  ADD COLUMN webhook_previous_secret_enc text,
  ADD COLUMN webhook_previous_secret_until timestamptz,
  ADD CONSTRAINT external_system_previous_secret_ck
    CHECK ((webhook_previous_secret_enc IS NULL) = (webhook_previous_secret_until IS NULL));
