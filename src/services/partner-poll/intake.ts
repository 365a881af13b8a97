import type { RuntimeDeps } from '../deps.js';
import type { RejectionReason } from '../../db/tables/polling.js';
import { AppError } from '../../lib/errors.js';
import { submitIntake, type IntakeCaller } from '../intake/index.js';

export type PolledItemOutcome =
  | { readonly kind: 'accepted'; readonly status: 200 | 201 }
  | { readonly kind: 'rejected'; readonly code: string; readonly reasons: RejectionReason[] };

/**
 * One polled item through exactly the intake path of POST /api/external/service-orders
 * (validation, reason mapping, city policy, numbering, geocoding, attachments,
 * idempotency by protocolNumber). No Idempotency-Key: a polled item is identified by
 * its protocolNumber, so a known one is a resend (N1), never a second alert.
 *
 * A refusal of the item itself (422: it breaks the IntakeRequest schema) is an
 * outcome; anything else (the database, the partner's scopes, shutdown) is thrown and
 * fails the poll, so the cursor stays and the batch is read again.
 */
export async function submitPolledItem(deps: RuntimeDeps, caller: IntakeCaller, item: unknown, signal?: AbortSignal): Promise<PolledItemOutcome> {
  try {
    const { status } = await submitIntake(deps, caller, item, { idempotencyKey: null, lang: 'en', signal });
    return { kind: 'accepted', status };
  } catch (err) {
    if (err instanceof AppError && err.status === 422) {
      const reasons = err.errors?.length ? err.errors.map((e) => ({ pointer: e.pointer, message: e.message })) : [{ pointer: '', message: err.detail('en') }];
      return { kind: 'rejected', code: err.code, reasons };
    }
    throw err;
  }
}
