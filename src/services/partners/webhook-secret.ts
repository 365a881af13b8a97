import { AppError, type FieldError } from '../../lib/errors.js';
import { keyringOf, openSecret, partnerSecretAad, sealSecret } from '../../lib/secret-box.js';
import { standardSecretProblem } from '../../lib/webhook-signature.js';
import { lockExternalSystemByCode, updateExternalSystem } from '../../db/repositories/external-system.repository.js';
import { findLiveKeyPrefix } from '../../db/repositories/api-key.repository.js';
import type { Executor } from '../../db/database.js';
import type { ServiceDeps } from '../deps.js';
import { recordAudit, type Actor } from '../audit/index.js';
import { inScope } from '../operators/index.js';
import { generateWebhookSecret, partnerView, type PartnerView } from './service.js';

/** How long a replaced webhook secret keeps signing when the caller does not say. Default 24 h. */
export const DEFAULT_SECRET_OVERLAP_SECONDS = 86_400;
const MAX_SECRET_OVERLAP_SECONDS = 7 * 86_400;

export interface RotateWebhookSecretInput {
  /** Seconds the replaced secret keeps signing; 0 drops it at once. Default 86400 (24 h). */
  overlapSeconds?: number | string;
  /** The new secret; default one made by Lumen (whsec_ form). */
  webhookSecret?: string;
}

/**
 * A new webhook secret for a partner, the replaced one sealed again as the previous
 * secret (its own column as associated data) so that it keeps signing until the overlap
 * ends; a previous secret of an earlier rotation is dropped. The new secret is returned
 * this once.
 */
export async function rotateWebhookSecret(deps: ServiceDeps, code: string, input: RotateWebhookSecretInput, actor?: Actor): Promise<PartnerView & { webhookSecret: string }> {
  const errors: FieldError[] = [];
  const overlap = input.overlapSeconds === undefined || input.overlapSeconds === '' ? DEFAULT_SECRET_OVERLAP_SECONDS : Number(input.overlapSeconds);
  if (!Number.isInteger(overlap) || overlap < 0 || overlap > MAX_SECRET_OVERLAP_SECONDS) errors.push({ pointer: '/overlapSeconds', message: `must be a whole number of seconds from 0 to ${MAX_SECRET_OVERLAP_SECONDS}` });
  const secret = input.webhookSecret ?? generateWebhookSecret();
  if (secret.length < 16) errors.push({ pointer: '/webhookSecret', message: 'must be at least 16 characters' });
  else if (standardSecretProblem(secret)) errors.push({ pointer: '/webhookSecret', message: standardSecretProblem(secret)! });
  if (errors.length > 0) throw new AppError('validation-failed', { count: errors.length }, errors);

  const keys = keyringOf(deps.config);
  return deps.db.transaction().execute(async (tx) => {
    const found = await lockExternalSystemByCode(tx, code);
    // A partner of a tenant the operator may not administer is not found, as everywhere.
    const row = actor ? inScope(actor.access, found, 'city-admin', `partner ${code}`) : found;
    if (!row) throw new AppError('not-found', { resource: `partner ${code}` });
    if (!row.webhook_secret_enc) throw new AppError('validation-failed', { count: 1 }, [{ pointer: '', message: 'the partner has no webhook secret to rotate: set one with webhookSecret first' }]);
    let previous: string | null = null;
    if (overlap > 0) {
      try {
        previous = openSecret(keys, row.webhook_secret_enc, partnerSecretAad(row.id, 'webhook_secret_enc'));
      } catch (err) {
        // Nothing could verify a signature made with it anyway; the rotation still helps.
        deps.log.warn({ err, partner: row.code }, 'the replaced webhook secret does not open; it is dropped at once');
      }
    }
    const updated = await updateExternalSystem(tx, row.id, {
      webhook_secret_enc: sealSecret(keys, secret, partnerSecretAad(row.id, 'webhook_secret_enc')),
      webhook_previous_secret_enc: previous === null ? null : sealSecret(keys, previous, partnerSecretAad(row.id, 'webhook_previous_secret_enc')),
      webhook_previous_secret_until: previous === null ? null : new Date(Date.now() + overlap * 1000),
    });
    const view = partnerView(updated, (await findLiveKeyPrefix(tx, row.id)) ?? null);
    if (actor) {
      await recordAudit(tx, actor, {
        tenantId: row.tenant_id,
        action: 'partner.rotate-secret',
        entityType: 'partner',
        entityId: row.id,
        before: { previousWebhookSecretUntil: partnerView(row, null).previousWebhookSecretUntil },
        after: { previousWebhookSecretUntil: view.previousWebhookSecretUntil },
        note: `new webhook secret; the replaced one ${previous === null ? 'no longer signs' : `signs until ${view.previousWebhookSecretUntil}`}`,
      });
    }
    return { ...view, webhookSecret: secret };
  });
}

/** Forgets replaced webhook secrets whose overlap is over (they stopped signing then already). Returns how many. */
export async function dropExpiredWebhookSecrets(db: Executor): Promise<number> {
  const res = await db
    .updateTable('external_system')
    .set({ webhook_previous_secret_enc: null, webhook_previous_secret_until: null })
    .where('webhook_previous_secret_until', '<=', new Date())
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}
