import { adminToken } from '../harness/admin.js';
import { HttpClient, isNotBuilt, json } from '../harness/http.js';
import { check, series } from '../harness/results.js';
import { median } from '../harness/stats.js';
import { Pending, type BenchContext, type RowDefinition } from '../harness/context.js';

const BATCH = 100;

interface BulkCity {
  readonly tenantId: string;
  readonly partnerId: string;
}

/** A manual-triage city with a polling partner (its events wait in the outbox: no webhook traffic in the timing). */
function bulkCity(ctx: BenchContext): Promise<BulkCity> {
  return ctx.once('bulk-city', async () => {
    const tenant = await ctx.createTenant('Bench bulk triage city', 'manual');
    const partner = await ctx.createPartner({ tenantId: tenant.id, scopes: ['canCreateAlerts'], transport: 'polling' });
    return { tenantId: tenant.id, partnerId: partner.id };
  });
}

let seeded = 0;

/** BATCH Pending alerts, inserted as intake leaves them (numbered apart from any other seed of the city). */
async function pendingAlerts(ctx: BenchContext, city: BulkCity): Promise<string[]> {
  const from = 1_000_000 + seeded;
  seeded += BATCH;
  const { rows } = await ctx.pool.query<{ id: string }>(
    `INSERT INTO alert (tenant_id, external_system_id, protocol_number, alert_number, status, requested_at, requester_name, reason_code, priority,
                        sla_due_at, address_street, address_number, address_neighborhood, latitude, longitude, location_source, description)
     SELECT $1, $2, 'BULK-' || g, g, 'Pending', now() - interval '1 hour', 'Maria Aparecida dos Santos', 'EXTERNAL_OTHER', 'Medium',
            now() + interval '1 day', 'Avenida Boa Viagem', (g % 5000)::text, 'Boa Viagem', -8.1 + (g % 1000) * 0.0001, -34.89, 'payload', 'Luminária quebrada'
       FROM generate_series($3::int, $3::int + $4::int - 1) g
     RETURNING id`,
    [city.tenantId, city.partnerId, from, BATCH],
  );
  return rows.map((r) => r.id);
}

/**
 * One bulk triage call on 100 Pending alerts (POST /api/admin/alerts/bulk): one order
 * for all of them, and a discard of all with one note. Each run triages fresh alerts;
 * timed on the client, request to last byte. Target p50 ≤ 1 s.
 */
export const bulkTriageRow: RowDefinition = {
  id: 'bulk-triage',
  title: 'Bulk action of 100 alerts',
  async run(ctx) {
    const server = await ctx.lumen();
    const city = await bulkCity(ctx);
    const client = new HttpClient(server.baseUrl, { authorization: `Bearer ${await adminToken(ctx)}` });
    try {
      const lines = [];
      for (const [action, params, label] of [
        ['create-order', {}, `one order for ${BATCH} Pending alerts (${BATCH} audit entries, ${BATCH} ServiceOrder.Created)`],
        ['discard', { note: 'duplicadas' }, `discard ${BATCH} Pending alerts with one note (${BATCH} audit entries, ${BATCH} Alert.Cancelled)`],
      ] as const) {
        const ms: number[] = [];
        for (let run = 0; run < Math.max(3, ctx.opts.runs); run++) {
          const alertIds = await pendingAlerts(ctx, city);
          const reply = await client.postJson('/api/admin/alerts/bulk', { tenantId: city.tenantId, alertIds, action, ...params });
          if (isNotBuilt(reply) || reply.status === 404) throw new Pending('bulk triage (POST /api/admin/alerts/bulk) not built yet');
          const body = json<{ handled?: number }>(reply, 'bulk triage');
          if (reply.status !== 200 || body.handled !== BATCH) throw new Error(`bulk ${action}: HTTP ${reply.status}, ${reply.body.toString('utf8').slice(0, 300)}`);
          ms.push(reply.ms);
        }
        const s = series('ms', ms, median);
        lines.push({ label, lumen: s, detail: `max ${Math.max(...ms).toFixed(0)} ms`, checks: [check('p50 ≤ 1 s', s.median <= 1000)] });
      }
      return {
        lines,
        notes: ['All or nothing in one transaction: 100 alerts locked in id order, then each goes through the single action’s code (history, audit entry, outbox event).'],
        params: { batch: BATCH },
      };
    } finally {
      client.close();
    }
  },
};
