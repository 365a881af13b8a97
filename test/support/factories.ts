import type { ServiceDeps } from '../../src/services/deps.js';
import { createTenant, type TenantView } from '../../src/services/tenants/service.js';
import { createPartner, type CreatePartnerInput } from '../../src/services/partners/service.js';
import { randomBytes } from 'node:crypto';
import { allocateNumbers, allocateServiceOrderNumber } from '../../src/db/repositories/counter.repository.js';

let counter = 0;
const unique = (prefix: string): string => `${prefix}-${process.pid}-${++counter}-${randomBytes(2).toString('hex')}`;

export async function makeTenant(deps: ServiceDeps, overrides: Partial<{ name: string; ibgeCode: string | null; intakePolicy: 'automatic' | 'manual' }> = {}): Promise<TenantView> {
  return createTenant(deps, { name: overrides.name ?? unique('City'), ibgeCode: overrides.ibgeCode === undefined ? '3550308' : overrides.ibgeCode, intakePolicy: overrides.intakePolicy ?? 'automatic' });
}

export async function makePartner(deps: ServiceDeps, overrides: Partial<CreatePartnerInput> = {}) {
  const tenantId = overrides.tenantId ?? (await makeTenant(deps)).id;
  return createPartner(deps, {
    tenantId,
    code: overrides.code ?? unique('partner'),
    scopes: overrides.scopes ?? ['canCreateServiceOrders', 'canReadCityData'],
    ...overrides,
  });
}

/** City data: a pole inserted directly, with a telegestor when `device` names one. */
export async function makeCityPole(
  deps: ServiceDeps,
  o: { tenantId: string; code?: string; address?: string; neighborhood?: string; latitude?: number; longitude?: number; active?: boolean; device?: string | null },
): Promise<{ id: string; code: string; deviceId: string | null }> {
  return deps.db.transaction().execute(async (tx) => {
    const pole = await tx
      .insertInto('pole')
      .values({ tenant_id: o.tenantId, code: o.code ?? unique('P'), address: o.address ?? 'Rua Augusta, 1500', neighborhood: o.neighborhood ?? 'Consolação', latitude: o.latitude ?? -23.5573, longitude: o.longitude ?? -46.6602, active: o.active ?? true })
      .returning(['id', 'code'])
      .executeTakeFirstOrThrow();
    let deviceId: string | null = null;
    if (o.device) {
      deviceId = (await tx.insertInto('telegestor').values({ tenant_id: o.tenantId, identifier: o.device, pole_id: pole.id, online: null, relay_on: null, last_communication_at: null }).returning('id').executeTakeFirstOrThrow()).id;
    }
    return { id: pole.id, code: pole.code, deviceId };
  });
}

export async function makeCityTeam(deps: ServiceDeps, o: { tenantId: string; name?: string }): Promise<{ id: string; name: string }> {
  return deps.db.insertInto('team').values({ tenant_id: o.tenantId, name: o.name ?? unique('Equipe') }).returning(['id', 'name']).executeTakeFirstOrThrow();
}

/** City data: a service order inserted directly, numbered like intake numbers them. */
export async function makeCityOrder(
  deps: ServiceDeps,
  o: { tenantId: string; status?: 'OPEN' | 'ASSIGNED' | 'IN_PROGRESS' | 'COMPLETED' | 'CANCELLED'; priority?: 'Low' | 'Medium' | 'High' | 'Critical'; teamId?: string | null; poleId?: string | null; address?: string; neighborhood?: string | null; latitude?: number | null; longitude?: number | null; closedAt?: Date | null },
): Promise<{ id: string; number: string }> {
  const number = await allocateServiceOrderNumber(deps.db, o.tenantId);
  return deps.db.transaction().execute(async (tx) => {
    return tx
      .insertInto('service_order')
      .values({
        tenant_id: o.tenantId,
        number,
        status: o.status ?? 'OPEN',
        priority: o.priority ?? 'Medium',
        reason_code: 'EXTERNAL_OTHER',
        address: o.address ?? 'Rua Augusta, 1500',
        neighborhood: o.neighborhood === undefined ? 'Consolação' : o.neighborhood,
        latitude: o.latitude === undefined ? -23.5573 : o.latitude,
        longitude: o.longitude === undefined ? -46.6602 : o.longitude,
        pole_id: o.poleId ?? null,
        team_id: o.teamId ?? null,
        sla_due_at: new Date(Date.now() + 24 * 3600_000),
        closed_at: o.closedAt ?? null,
      })
      .returning(['id', 'number'])
      .executeTakeFirstOrThrow();
  });
}

/**
 * Events: an alert of `externalSystemId` inserted directly, Linked to a new OPEN order
 * (default) or Pending without one, in the shape emitEvent takes as its subject.
 */
export async function makeEventSubject(
  deps: ServiceDeps,
  o: { tenantId: string; externalSystemId: string; withOrder?: boolean; protocolNumber?: string },
): Promise<{ alert: { id: string; tenant_id: string; external_system_id: string; protocol_number: string; alert_number: number; status: 'Pending' | 'Linked' }; serviceOrderId: string | null }> {
  const withOrder = o.withOrder ?? true;
  const order = withOrder ? await makeCityOrder(deps, { tenantId: o.tenantId }) : null;
  const { alertNumber } = await allocateNumbers(deps.db, o.tenantId, { alert: true, serviceOrder: false });
  return deps.db.transaction().execute(async (tx) => {
    const row = await tx
      .insertInto('alert')
      .values({
        tenant_id: o.tenantId,
        external_system_id: o.externalSystemId,
        protocol_number: o.protocolNumber ?? unique('156-2026'),
        alert_number: alertNumber!,
        status: withOrder ? 'Linked' : 'Pending',
        requested_at: new Date(),
        requester_name: 'Maria Souza',
        reason_code: 'EXTERNAL_OTHER',
        priority: 'Medium',
        sla_due_at: new Date(Date.now() + 24 * 3600_000),
        address_street: 'Rua Augusta',
        description: 'Lâmpada apagada',
        service_order_id: order?.id ?? null,
      })
      .returning(['id', 'tenant_id', 'external_system_id', 'protocol_number', 'alert_number'])
      .executeTakeFirstOrThrow();
    return { alert: { ...row, status: withOrder ? ('Linked' as const) : ('Pending' as const) }, serviceOrderId: order?.id ?? null };
  });
}

/** Operations: an internal reason of a tenant (EXTERNAL_OTHER exists in every tenant). */
export async function makeReason(deps: ServiceDeps, o: { tenantId: string; code?: string; priority?: 'Low' | 'Medium' | 'High' | 'Critical'; slaHours?: number; namePt?: string; nameEn?: string }): Promise<{ code: string; priority: string; slaHours: number }> {
  const code = o.code ?? unique('R').replace(/-/g, '_').toUpperCase();
  const row = await deps.db
    .insertInto('reason')
    .values({ tenant_id: o.tenantId, code, name_pt: o.namePt ?? `Motivo ${code}`, name_en: o.nameEn ?? `Reason ${code}`, priority: o.priority ?? 'High', sla_hours: o.slaHours ?? 8 })
    .returning(['code', 'priority', 'sla_hours'])
    .executeTakeFirstOrThrow();
  return { code: row.code, priority: row.priority, slaHours: row.sla_hours };
}

/** Operations: a field team of a tenant. */
export async function makeTeam(deps: ServiceDeps, o: { tenantId: string; name?: string }): Promise<{ id: string; name: string }> {
  return deps.db.insertInto('team').values({ tenant_id: o.tenantId, name: o.name ?? unique('Equipe') }).returning(['id', 'name']).executeTakeFirstOrThrow();
}

export interface MadeAlert {
  id: string;
  alertNumber: number;
  protocolNumber: string;
  tenantId: string;
  externalSystemId: string;
  serviceOrderId: string | null;
  serviceOrderNumber: string | null;
}

/**
 * Operations: an alert inserted directly, as intake leaves it. `Pending` (manual triage,
 * the default) or `Linked` to a new OPEN order (automatic mode, or `orderId` to join an
 * existing one). Without coordinates when `latitude` is null. Numbers as intake numbers them.
 */
export async function makeAlert(
  deps: ServiceDeps,
  o: { tenantId: string; externalSystemId: string; status?: 'Pending' | 'Linked'; orderId?: string; protocolNumber?: string; latitude?: number | null; longitude?: number | null; reasonCode?: string; street?: string; number?: string | null },
): Promise<MadeAlert> {
  const numbers = await allocateNumbers(deps.db, o.tenantId, { alert: true, serviceOrder: o.status === 'Linked' && !o.orderId });
  return deps.db.transaction().execute(async (tx) => {
    const latitude = o.latitude === undefined ? -23.5573 : o.latitude;
    const longitude = latitude === null ? null : o.longitude === undefined ? -46.6602 : o.longitude;
    const street = o.street ?? 'Rua Augusta';
    const houseNumber = o.number === undefined ? '1500' : o.number;
    const slaDueAt = new Date(Date.now() + 24 * 3600_000);
    let orderId: string | null = null;
    let orderNumber: string | null = null;
    if (o.status === 'Linked') {
      if (o.orderId) {
        orderId = o.orderId;
        orderNumber = (await tx.selectFrom('service_order').select('number').where('id', '=', o.orderId).executeTakeFirstOrThrow()).number;
      } else {
        orderNumber = numbers.serviceOrderNumber!;
        const order = await tx
          .insertInto('service_order')
          .values({ tenant_id: o.tenantId, number: orderNumber, status: 'OPEN', priority: 'Medium', reason_code: o.reasonCode ?? 'EXTERNAL_OTHER', address: houseNumber ? `${street}, ${houseNumber}` : street, neighborhood: 'Consolação', latitude, longitude, pole_id: null, team_id: null, sla_due_at: slaDueAt, closed_at: null })
          .returning('id')
          .executeTakeFirstOrThrow();
        orderId = order.id;
        await tx.insertInto('service_order_status_history').values({ service_order_id: order.id, from_status: null, to_status: 'OPEN', actor: 'intake', note: null }).execute();
      }
    }
    const alertNumber = numbers.alertNumber!;
    const protocolNumber = o.protocolNumber ?? unique('PROTO');
    const alert = await tx
      .insertInto('alert')
      .values({
        tenant_id: o.tenantId,
        external_system_id: o.externalSystemId,
        protocol_number: protocolNumber,
        alert_number: alertNumber,
        status: o.status ?? 'Pending',
        requested_at: new Date(Date.now() - 60_000),
        requester_name: 'Maria da Silva',
        requester_phone: '+5511987654321',
        lamp_type: 'LED',
        partner_reason_code: null,
        reason_code: o.reasonCode ?? 'EXTERNAL_OTHER',
        priority: 'Medium',
        sla_due_at: slaDueAt,
        address_street: street,
        address_number: houseNumber,
        address_neighborhood: 'Consolação',
        address_reference: null,
        latitude,
        longitude,
        location_source: latitude === null ? null : 'payload',
        description: 'Poste apagado',
        additional_notes: null,
        service_order_id: orderId,
        cancel_reason: null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await tx.insertInto('alert_status_history').values({ alert_id: alert.id, from_status: null, to_status: o.status ?? 'Pending', actor: 'intake', note: null }).execute();
    return { id: alert.id, alertNumber, protocolNumber, tenantId: o.tenantId, externalSystemId: o.externalSystemId, serviceOrderId: orderId, serviceOrderNumber: orderNumber };
  });
}
