import { AppError, type FieldError } from '../../lib/errors.js';
import { findTenant } from '../../db/repositories/tenant.repository.js';
import { recordAudit, type Actor } from '../audit/index.js';
import type { ServiceDeps } from '../deps.js';
import { isUuid } from '../tenants/index.js';

export interface LampOutPolicy {
  tenantId: string;
  /** Minutes a lamp may be out before an alert; null: telemetry raises no alerts (the default). */
  afterMinutes: number | null;
  /** Local night window, HH:MM (may wrap midnight). */
  nightStarts: string;
  nightEnds: string;
  /** IANA time zone of the window. */
  timezone: string;
}

export interface LampOutPolicyInput {
  afterMinutes?: number | null;
  nightStarts?: string;
  nightEnds?: string;
  timezone?: string;
}

const HHMM = /^([01][0-9]|2[0-3]):[0-5][0-9]$/;

function validTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** Changes what of a tenant's settings is given; every bad value is reported at once; audited. */
export async function setLampOutPolicy(deps: ServiceDeps, actor: Actor, tenantId: string, input: LampOutPolicyInput): Promise<LampOutPolicy> {
  const errors: FieldError[] = [];
  if (input.afterMinutes !== undefined && input.afterMinutes !== null && !(Number.isInteger(input.afterMinutes) && input.afterMinutes >= 1 && input.afterMinutes <= 10080)) {
    errors.push({ pointer: '/afterMinutes', message: 'must be a whole number of minutes from 1 to 10080 (a week), or off' });
  }
  if (input.nightStarts !== undefined && !HHMM.test(input.nightStarts)) errors.push({ pointer: '/nightStarts', message: 'must be HH:MM (24 h)' });
  if (input.nightEnds !== undefined && !HHMM.test(input.nightEnds)) errors.push({ pointer: '/nightEnds', message: 'must be HH:MM (24 h)' });
  if (input.nightStarts !== undefined && input.nightStarts === input.nightEnds) errors.push({ pointer: '/nightEnds', message: 'must differ from nightStarts' });
  if (input.timezone !== undefined && !validTimeZone(input.timezone)) errors.push({ pointer: '/timezone', message: 'must be an IANA time zone, e.g. America/Sao_Paulo' });
  if (errors.length > 0) throw new AppError('validation-failed', { count: errors.length }, errors);
  if (!isUuid(tenantId)) throw new AppError('not-found', { resource: `tenant ${tenantId}` });

  return deps.db.transaction().execute(async (tx) => {
    const before = await findTenant(tx, tenantId);
    if (!before) throw new AppError('not-found', { resource: `tenant ${tenantId}` });
    const after = await tx
      .updateTable('tenant')
      .set({
        ...(input.afterMinutes !== undefined ? { lamp_out_after_minutes: input.afterMinutes } : {}),
        ...(input.nightStarts !== undefined ? { night_starts: input.nightStarts } : {}),
        ...(input.nightEnds !== undefined ? { night_ends: input.nightEnds } : {}),
        ...(input.timezone !== undefined ? { timezone: input.timezone } : {}),
      })
      .where('id', '=', tenantId)
      .returningAll()
      .executeTakeFirstOrThrow();
    const view = (row: typeof after): LampOutPolicy => ({
      tenantId: row.id,
      afterMinutes: row.lamp_out_after_minutes,
      nightStarts: row.night_starts.slice(0, 5),
      nightEnds: row.night_ends.slice(0, 5),
      timezone: row.timezone,
    });
    await recordAudit(tx, actor, { tenantId, action: 'tenant.lamp-out-policy', entityType: 'tenant', entityId: tenantId, before: view(before), after: view(after) });
    return view(after);
  });
}
