import type { PoleDetail } from '../../../generated/admin/types.gen.js';
import { AppError } from '../../lib/errors.js';
import type { Language } from '../../lib/i18n.js';
import { findPoleByCode, poleAlerts, poleOrders, telegestorStates } from '../../db/repositories/operations/pole-detail.repository.js';
import { requireTenantRole, type AdminAccess } from '../operators/index.js';
import type { ServiceDeps } from '../deps.js';
import { isUuid } from '../tenants/index.js';

export const POLE_STATES_DEFAULT = 50;
export const POLE_STATES_MAX = 200;
/** Orders and alerts listed on a pole page (open ones first). */
export const POLE_ITEMS_MAX = 100;

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

/**
 * One pole of a tenant by its code, for the operators' pole page: its telegestor and
 * that device's changes of state, and the orders and alerts on it. The tenant is
 * checked before anything is read; a code the tenant does not have (another city's
 * pole included) is the same not-found.
 */
export async function poleByCode(deps: ServiceDeps, access: AdminAccess, input: { tenantId: string; code: string; states?: number | string }, lang: Language): Promise<PoleDetail> {
  const resource = `pole ${input.code}`;
  if (!isUuid(input.tenantId)) throw new AppError('not-found', { resource });
  requireTenantRole(access, input.tenantId, 'viewer', resource);
  const asked = input.states === undefined ? POLE_STATES_DEFAULT : Number(input.states);
  if (!Number.isInteger(asked) || asked < 1) throw new AppError('invalid-parameter', {}, [{ pointer: '/query/states', message: 'must be a whole number of at least 1' }]);
  const pole = await findPoleByCode(deps.db, input.tenantId, input.code);
  if (!pole) throw new AppError('not-found', { resource });
  const g = pole.telegestor;
  const [states, orders, alerts] = await Promise.all([
    g ? telegestorStates(deps.db, pole.tenant_id, g.id, Math.min(asked, POLE_STATES_MAX)) : Promise.resolve([]),
    poleOrders(deps.db, pole.tenant_id, pole.id, POLE_ITEMS_MAX),
    poleAlerts(deps.db, pole.tenant_id, pole.id, POLE_ITEMS_MAX),
  ]);
  const now = Date.now();
  return {
    id: pole.id,
    tenantId: pole.tenant_id,
    code: pole.code,
    address: pole.address,
    neighborhood: pole.neighborhood,
    latitude: pole.latitude,
    longitude: pole.longitude,
    active: pole.active,
    circuit: pole.circuit,
    telegestor: g
      ? { identifier: g.identifier, online: g.online, relayOn: g.relay_on, lastCommunicationAt: iso(g.last_communication_at), offlineSince: iso(g.offline_since), relayOffSince: iso(g.relay_off_since) }
      : null,
    states: states.map((s) => ({ online: s.online, relayOn: s.relay_on, reportedAt: s.reported_at.toISOString() })),
    serviceOrders: orders.map((o) => ({
      id: o.id,
      number: o.number,
      status: o.status,
      priority: o.priority,
      type: o.reason_code,
      openedAt: o.opened_at.toISOString(),
      closedAt: iso(o.closed_at),
      slaDueAt: o.sla_due_at.toISOString(),
      overdue: o.closed_at === null && o.sla_due_at.getTime() < now,
    })),
    alerts: alerts.map((a) => ({
      id: a.id,
      alertNumber: Number(a.alert_number),
      status: a.status,
      reasonCode: a.reason_code,
      reasonName: (lang === 'en' ? a.name_en : a.name_pt) ?? a.reason_code,
      priority: a.priority,
      requestedAt: a.requested_at.toISOString(),
      serviceOrderId: a.service_order_id,
    })),
  };
}
