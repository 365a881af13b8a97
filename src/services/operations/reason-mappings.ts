import type { ApplyMappingResult, PartnerReasonCodes } from '../../../generated/admin/types.gen.js';
import { AppError } from '../../lib/errors.js';
import { findReason, findReasonMapping, lockPendingWithPartnerCode, partnerCodeUses } from '../../db/repositories/operations/reason.repository.js';
import { updateAlert } from '../../db/repositories/operations/triage.repository.js';
import { cliActor, recordAudit, type Actor } from '../audit/index.js';
import type { ServiceDeps } from '../deps.js';
import { requirePartner } from './reasons.js';
import { operatorTransaction } from './transaction.js';
import { alertSnapshot } from './triage-view.js';

/**
 * A partner's reason codes as the city's mapping desk sees them: each code mapped or
 * seen in its alerts, with its mapping (null: unmapped, it lands on EXTERNAL_OTHER),
 * how many alerts carried it and how many of those still wait as Pending.
 */
export async function partnerReasonCodes(deps: ServiceDeps, partnerCode: string, by: Actor = cliActor()): Promise<PartnerReasonCodes> {
  const partner = await requirePartner(deps, by.access, partnerCode, 'viewer');
  const uses = await partnerCodeUses(deps.db, partner.id);
  return {
    partner: partner.code,
    tenantId: partner.tenant_id,
    items: uses.map((u) => ({ partnerCode: u.partner_code, reasonCode: u.reason_code, description: u.description, alerts: u.alerts, pendingAlerts: u.pending, alertsToApply: u.to_apply, lastSeenAt: u.last_seen_at ? u.last_seen_at.toISOString() : null })),
  };
}

/**
 * Reclassifies the Pending alerts of a partner that carry `partnerCode` to the reason
 * it maps to now (an alert keeps its arrival time: its SLA deadline is counted from it
 * again). One transaction: every alert, an audit entry per alert and one for the whole
 * action, or nothing. Alerts already Linked are left alone (their order's reason is
 * an operator's decision). No event: statuses do not change.
 */
export async function applyReasonMapping(deps: ServiceDeps, partnerCode: string, code: string, by: Actor = cliActor()): Promise<ApplyMappingResult> {
  const partner = await requirePartner(deps, by.access, partnerCode, 'triager');
  return operatorTransaction(deps, async (tx) => {
    const mapping = await findReasonMapping(tx, partner.id, code);
    if (!mapping) throw new AppError('not-found', { resource: `mapping of ${code} for partner ${partner.code}` });
    const reason = (await findReason(tx, partner.tenant_id, mapping.reason_code))!;
    const alerts = await lockPendingWithPartnerCode(tx, partner.id, code, reason.code);
    const numbers: number[] = [];
    for (const alert of alerts) {
      const slaDueAt = new Date(alert.created_at.getTime() + reason.sla_hours * 3_600_000);
      const updated = await updateAlert(tx, alert.id, { reason_code: reason.code, priority: reason.priority, sla_due_at: slaDueAt });
      await recordAudit(tx, by, { tenantId: alert.tenant_id, action: 'alert.reclassify', entityType: 'alert', entityId: alert.id, before: alertSnapshot(alert), after: alertSnapshot(updated), note: `mapping ${partner.code}: ${code} -> ${reason.code}` });
      numbers.push(alert.alert_number);
    }
    await recordAudit(tx, by, { tenantId: partner.tenant_id, action: 'reason.apply-mapping', entityType: 'partner', entityId: partner.id, before: null, after: { partnerCode: code, reasonCode: reason.code, reclassified: numbers.length } });
    return { partner: partner.code, partnerCode: code, reasonCode: reason.code, reclassified: numbers.length, alertNumbers: numbers.sort((a, b) => a - b) };
  });
}
