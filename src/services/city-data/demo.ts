import { sql } from 'kysely';
import { allocateServiceOrderNumber } from '../../db/repositories/counter.repository.js';
import { applyDeviceStates, type DeviceState } from '../../db/repositories/city-data/telemetry.repository.js';
import type { ServiceDeps } from '../deps.js';

export interface DemoCity {
  poles: number;
  telegestors: number;
  reporting: number;
  teams: { id: string; name: string }[];
  serviceOrders: { id: string; number: string; status: string }[];
}

/** A small deterministic generator: the demo city is the same on every machine. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const CENTRE = { latitude: -23.5505, longitude: -46.6333 };
const NEIGHBORHOODS: [string, string, string[]][] = [
  ['SE', 'Sé', ['Praça da Sé', 'Rua Direita', 'Rua XV de Novembro', 'Rua Boa Vista']],
  ['REP', 'República', ['Avenida Ipiranga', 'Rua Sete de Abril', 'Avenida São Luís', 'Rua Barão de Itapetininga']],
  ['BVI', 'Bela Vista', ['Avenida Paulista', 'Rua Treze de Maio', 'Rua Rui Barbosa', 'Avenida Brigadeiro Luís Antônio']],
  ['CON', 'Consolação', ['Rua Augusta', 'Rua da Consolação', 'Rua Frei Caneca', 'Rua Haddock Lobo']],
  ['LIB', 'Liberdade', ['Rua Galvão Bueno', 'Rua da Glória', 'Avenida Liberdade', 'Rua dos Estudantes']],
  ['STC', 'Santa Cecília', ['Rua Jaguaribe', 'Avenida Angélica', 'Rua Marquês de Itu', 'Alameda Barros']],
];

/**
 * Poles around a São Paulo-like centre (a few hundred, most with a telegestor, most
 * of those already reporting), two field teams and a few service orders in different
 * states. Telemetry goes through the same path as real reports, so the poles'
 * updatedAt move with it.
 */
export async function seedDemoCity(deps: ServiceDeps, tenantId: string, size = 300): Promise<DemoCity> {
  const rnd = mulberry32(20260314);
  const poles = Array.from({ length: size }, (_, i) => {
    const [abbr, neighborhood, streets] = NEIGHBORHOODS[i % NEIGHBORHOODS.length]!;
    const street = streets[Math.floor(rnd() * streets.length)]!;
    return {
      code: `SP-${abbr}-${String(i + 1).padStart(6, '0')}`,
      address: `${street}, ${10 + Math.floor(rnd() * 2400)}`,
      neighborhood,
      latitude: Number((CENTRE.latitude + (rnd() - 0.5) * 0.04).toFixed(6)),
      longitude: Number((CENTRE.longitude + (rnd() - 0.5) * 0.04).toFixed(6)),
      active: rnd() > 0.03,
      device: rnd() < 0.8 ? `TG-${(0xa00000 + i * 37).toString(16).toUpperCase()}` : null,
    };
  });
  const now = Date.now();

  const plan: { status: 'OPEN' | 'ASSIGNED' | 'IN_PROGRESS' | 'COMPLETED'; priority: 'Low' | 'Medium' | 'High'; team: number | null }[] = [
    { status: 'OPEN', priority: 'Medium', team: null },
    { status: 'ASSIGNED', priority: 'High', team: 0 },
    { status: 'IN_PROGRESS', priority: 'Medium', team: 1 },
    { status: 'COMPLETED', priority: 'Low', team: 0 },
  ];
  // Numbers are taken outside the transaction, like every writer takes them (counter.repository.ts).
  const numbers: string[] = [];
  for (let i = 0; i < plan.length; i++) numbers.push(await allocateServiceOrderNumber(deps.db, tenantId));

  return deps.db.transaction().execute(async (tx) => {
    const inserted = await sql<{ id: string; code: string }>`
      INSERT INTO pole (tenant_id, code, address, neighborhood, latitude, longitude, active)
      SELECT ${tenantId}, * FROM unnest(${poles.map((p) => p.code)}::text[], ${poles.map((p) => p.address)}::text[], ${poles.map((p) => p.neighborhood)}::text[],
        ${poles.map((p) => p.latitude)}::float8[], ${poles.map((p) => p.longitude)}::float8[], ${poles.map((p) => p.active)}::boolean[])
      ON CONFLICT (tenant_id, code) DO NOTHING
      RETURNING id, code`.execute(tx);
    const idByCode = new Map(inserted.rows.map((r) => [r.code, r.id]));
    const withDevice = poles.filter((p) => p.device && idByCode.has(p.code));
    if (withDevice.length > 0) {
      await tx
        .insertInto('telegestor')
        .values(withDevice.map((p) => ({ tenant_id: tenantId, identifier: p.device!, pole_id: idByCode.get(p.code)!, online: null, relay_on: null, last_communication_at: null })))
        .onConflict((oc) => oc.columns(['tenant_id', 'identifier']).doNothing())
        .execute();
    }
    // Most devices have reported in the last quarter of an hour; a few never did.
    const reports: DeviceState[] = withDevice
      .filter(() => rnd() < 0.9)
      .map((p) => {
        const online = rnd() < 0.94;
        return { identifier: p.device!, online, relayOn: online ? rnd() < 0.7 : null, reportedAt: new Date(now - Math.floor(rnd() * 15 * 60_000)).toISOString() };
      });
    const { applied } = await applyDeviceStates(tx, tenantId, reports);

    const teams: { id: string; name: string }[] = [];
    for (const name of ['Equipe Centro 01', 'Equipe Centro 02']) {
      await tx.insertInto('team').values({ tenant_id: tenantId, name }).onConflict((oc) => oc.columns(['tenant_id', 'name']).doNothing()).execute();
      teams.push(await tx.selectFrom('team').select(['id', 'name']).where('tenant_id', '=', tenantId).where('name', '=', name).executeTakeFirstOrThrow());
    }

    const serviceOrders: DemoCity['serviceOrders'] = [];
    for (const [i, o] of plan.entries()) {
      const p = poles[(i * 41) % poles.length]!;
      const poleId = idByCode.get(p.code) ?? null;
      const number = numbers[i]!;
      const order = await tx
        .insertInto('service_order')
        .values({
          tenant_id: tenantId,
          number,
          status: o.status,
          priority: o.priority,
          reason_code: 'EXTERNAL_OTHER',
          address: p.address,
          neighborhood: p.neighborhood,
          latitude: p.latitude,
          longitude: p.longitude,
          pole_id: poleId,
          team_id: o.team === null ? null : teams[o.team]!.id,
          sla_due_at: new Date(now + 24 * 3600_000),
          closed_at: o.status === 'COMPLETED' ? new Date(now) : null,
        })
        .returning(['id', 'number', 'status'])
        .executeTakeFirstOrThrow();
      await tx.insertInto('service_order_status_history').values({ service_order_id: order.id, from_status: null, to_status: order.status, actor: 'demo', note: 'demo city' }).execute();
      serviceOrders.push(order);
    }
    return { poles: inserted.rows.length, telegestors: withDevice.length, reporting: applied.size, teams, serviceOrders };
  });
}
