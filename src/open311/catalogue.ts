import type { Discovery, Service, ServiceDefinition } from '../../generated/open311/types.gen.js';
import { findReason, listReasons, type ReasonRow } from '../db/repositories/operations/reason.repository.js';
import { findTenant } from '../db/repositories/tenant.repository.js';
import { AppError } from '../lib/errors.js';
import type { Language } from '../lib/i18n.js';
import type { ServiceDeps } from '../services/deps.js';
import type { Open311Caller } from './caller.js';

/** When the GeoReport v2 surface of this release was last described (discovery's changeset). */
const CHANGESET = '2026-11-24T00:00:00Z';

/** What discovery says; `url` is where the caller reached this endpoint; `jurisdictionId` when asked with a key (its city). */
export function discovery(url: string, jurisdictionId?: string): Discovery {
  return {
    ...(jurisdictionId ? { jurisdiction_id: jurisdictionId } : {}),
    changeset: CHANGESET,
    contact: 'Lumen integration support of the city operation',
    key_service: 'API keys are issued by the city operation (lumen partner create); the same key as on the Lumen partner API.',
    endpoints: [{ specification: 'http://wiki.open311.org/GeoReport_v2', url, changeset: CHANGESET, type: 'production', formats: ['text/xml', 'application/json'] }],
  };
}

export function serviceNotice(slaHours: number, lang: Language): string {
  return lang === 'en' ? `Expected within ${slaHours} h` : `Prazo de atendimento ${slaHours} h`;
}

/**
 * Whether the caller's requests become service orders at once (the tenant triages
 * automatically and the key may create orders): `realtime` services answer an id,
 * `batch` ones a token.
 */
async function isRealtime(deps: ServiceDeps, caller: Open311Caller): Promise<boolean> {
  const tenant = await findTenant(deps.db, caller.tenantId);
  return tenant?.intake_policy === 'automatic' && caller.scopes.includes('canCreateServiceOrders');
}

function service(row: ReasonRow, realtime: boolean, lang: Language): Service {
  const name = lang === 'en' ? row.name_en : row.name_pt;
  return {
    service_code: row.code,
    service_name: name,
    description: lang === 'en' ? `Priority ${row.priority}, expected within ${row.sla_hours} h` : `Prioridade ${row.priority}, prazo de atendimento ${row.sla_hours} h`,
    // Lumen's reasons define no attributes (see the document).
    metadata: false,
    type: realtime ? 'realtime' : 'batch',
    keywords: [lang === 'en' ? 'street lighting' : 'iluminação pública', row.code].join(', '),
    group: lang === 'en' ? 'Street lighting' : 'Iluminação pública',
  };
}

/** The key's city's reasons as GeoReport v2 services. */
export async function listServices(deps: ServiceDeps, caller: Open311Caller, lang: Language): Promise<Service[]> {
  const [rows, realtime] = await Promise.all([listReasons(deps.db, caller.tenantId), isRealtime(deps, caller)]);
  return rows.map((r) => service(r, realtime, lang));
}

/** A reason of the key's city, or 404. */
export async function requireService(deps: ServiceDeps, caller: Open311Caller, code: string): Promise<ReasonRow> {
  const row = await findReason(deps.db, caller.tenantId, code);
  if (!row) throw new AppError('not-found', { resource: `service_code ${code}` });
  return row;
}

export async function serviceDefinition(deps: ServiceDeps, caller: Open311Caller, code: string): Promise<ServiceDefinition> {
  const row = await requireService(deps, caller, code);
  return { service_code: row.code, attributes: [] };
}
