import { inboxPageSql } from './console-inbox.js';
import { adminToken } from '../harness/admin.js';
import { HttpClient, isNotBuilt, json } from '../harness/http.js';
import { check, ratioOf } from '../harness/results.js';
import { getOk, timeGet, timeSql } from '../harness/timing.js';
import { Pending, type BenchContext, type RowDefinition } from '../harness/context.js';

/** What the inbox sends when the operator types in its search box (src/console/web/pages/inbox.tsx). */
const PAGE_SIZE = 100;

const STREETS = [
  'Rua Desembargador Westphalen', 'Avenida Sete de Setembro', 'Rua XV de Novembro', 'Avenida Marechal Floriano Peixoto', 'Rua Mateus Leme',
  'Rua Padre Anchieta', 'Avenida Batel', 'Rua Comendador Araújo', 'Avenida República Argentina', 'Rua Brigadeiro Franco',
  'Rua Conselheiro Laurindo', 'Avenida Manoel Ribas', 'Rua Emiliano Perneta', 'Avenida Visconde de Guarapuava', 'Rua João Negrão',
  'Rua Itupava', 'Avenida Paraná', 'Rua Marechal Deodoro', 'Rua São Francisco', 'Avenida Iguaçu',
];
const NEIGHBORHOODS = ['Centro', 'Batel', 'Água Verde', 'Rebouças', 'São Francisco', 'Bigorrilho', 'Mercês', 'Alto da XV', 'Portão', 'Cabral', 'Juvevê', 'Boa Vista'];
const FIRST = ['Maria', 'José', 'Ana', 'João', 'Conceição', 'Antônio', 'Francisca', 'Luiz', 'Aparecida', 'Paulo', 'Sebastião', 'Rogério', 'Lúcia', 'Fábio'];
const LAST = ['Silva', 'Souza', 'Oliveira', 'Kowalski', 'Brandão', 'Pereira', 'Wiśniewski', 'Lima', 'Ferreira', 'Nascimento', 'Gonçalves', 'Zanetti', 'Müller', 'Araújo'];
const DESCRIPTIONS = ['Lâmpada apagada há três noites', 'Luminária piscando a noite toda', 'Poste com a luminária caída', 'Lâmpada acesa durante o dia', 'Fiação exposta no poste', 'Braço da luminária quebrado'];

/**
 * The texts timed, as an operator types them, taken from one seeded alert (so each
 * finds it at any size): its address as the row displays it (the street's last
 * word and the number), a citizen's name without accents, its phone's first digits.
 */
function searches(count: number): { label: string; text: string }[] {
  const g = Math.min(count, 1237);
  const street = STREETS[g % STREETS.length]!.split(' ').pop()!;
  const houseNumber = 1 + ((g * 31) % 3000);
  const phone = `41 9${String((g * 7919) % 10000).padStart(4, '0')}`;
  return [
    { label: `an address as displayed ("${street}, ${houseNumber}")`, text: `${street}, ${houseNumber}` },
    { label: 'a citizen\'s name without accents ("conceicao brandao")', text: 'conceicao brandao' },
    { label: `a phone's first digits ("${phone}")`, text: phone },
  ];
}

const sqlList = (items: readonly string[]) => `ARRAY[${items.map((s) => `'${s.replace(/'/g, "''")}'`).join(', ')}]`;

interface SearchCity {
  readonly tenantId: string;
  readonly alerts: number;
}

/** ctx.sizes.searchAlerts Pending alerts of one partner, varied as a city's requests are, vacuumed (as autovacuum leaves them). */
function searchCity(ctx: BenchContext): Promise<SearchCity> {
  return ctx.once('search-city', async () => {
    const count = ctx.sizes.searchAlerts;
    const tenant = await ctx.createTenant('Bench search city', 'manual');
    const partner = await ctx.createPartner({ tenantId: tenant.id, scopes: ['canCreateAlerts'], transport: 'polling' });
    ctx.log(`seeding ${count.toLocaleString('en-US')} varied Pending alerts`);
    await ctx.pool.query(
      `INSERT INTO alert (tenant_id, external_system_id, protocol_number, alert_number, status, requested_at, requester_name, requester_phone,
                          reason_code, priority, sla_due_at, address_street, address_number, address_neighborhood, latitude, longitude, location_source, description)
       SELECT $1, $2, 'SAC-CWB-' || lpad(g::text, 7, '0'), g, 'Pending', now() - (g % 500) * interval '1 minute',
              (${sqlList(FIRST)})[1 + g % ${FIRST.length}] || ' ' || (${sqlList(LAST)})[1 + (g / 7) % ${LAST.length}] || ' ' || (${sqlList(LAST)})[1 + (g / 3) % ${LAST.length}],
              '(41) 9' || lpad(((g::bigint * 7919) % 10000)::text, 4, '0') || '-' || lpad(((g::bigint * 104729) % 10000)::text, 4, '0'),
              'EXTERNAL_OTHER', (ARRAY['Low', 'Medium', 'High', 'Critical'])[1 + g % 4], now() + (g % 72) * interval '1 hour',
              (${sqlList(STREETS)})[1 + g % ${STREETS.length}], (1 + (g * 31) % 3000)::text, (${sqlList(NEIGHBORHOODS)})[1 + g % ${NEIGHBORHOODS.length}],
              -25.43 + (g % 1000) * 0.0001, -49.27, 'payload', (${sqlList(DESCRIPTIONS)})[1 + g % ${DESCRIPTIONS.length}]
         FROM generate_series(1, $3::int) g`,
      [tenant.id, partner.id, count],
    );
    await ctx.pool.query(
      `SELECT lumen_raise_number($1, 'alert', 0, $2)`,
      [tenant.id, count],
    );
    await ctx.pool.query('VACUUM (ANALYZE) alert');
    return { tenantId: tenant.id, alerts: count };
  });
}

/** The statements listAlertDetails runs for a searched page (page and count), as one statement: the same WHERE (triage.repository.ts's alertConditions). */
function searchPageSql(tenantId: string, text: string): string {
  const words = text.split(/[^\p{L}\p{N}]+/u).filter(Boolean);
  const lit = (s: string) => `'${s.replace(/'/g, "''")}'`;
  return inboxPageSql(
    tenantId,
    `(${words.map((w) => `a.search_text LIKE '%' || lumen_search_norm(${lit(w)}::text) || '%'`).join(' AND ')})
      OR (a.service_order_id IS NOT NULL AND a.service_order_id = ANY(ARRAY(SELECT so.id FROM pole tp JOIN service_order so ON so.pole_id = tp.id
                                                                           WHERE upper(tp.code) = upper(${lit(text)}) AND tp.tenant_id = '${tenantId}')))`,
  );
}

/**
 * The inbox's search: GET /api/admin/alerts with `text` as the inbox sends it (status
 * Pending, sort priority, 100 a page) over a city of ctx.sizes.searchAlerts alerts
 * (100,000; 2,000 with --quick). Anchor: the bare SQL of the same page and count
 * through psql. Target p50 ≤ 50 ms.
 */
export const inboxSearchRow: RowDefinition = {
  id: 'inbox-search',
  title: 'Inbox search over the city’s alerts',
  async run(ctx) {
    const server = await ctx.lumen();
    const city = await searchCity(ctx);
    const client = new HttpClient(server.baseUrl, { authorization: `Bearer ${await adminToken(ctx)}` });
    try {
      const lines = [];
      for (const s of searches(city.alerts)) {
        const path = `/api/admin/alerts?${new URLSearchParams({ tenantId: city.tenantId, status: 'Pending', sort: 'priority', page: '1', pageSize: String(PAGE_SIZE), text: s.text })}`;
        const first = await client.get(path);
        if (isNotBuilt(first)) throw new Pending('admin alert list (GET /api/admin/alerts) not built yet');
        const body = json<{ items: unknown[]; total: number }>(await getOk(client, path), 'inbox search');
        if (body.total === 0) throw new Error(`inbox search "${s.text}": nothing found in ${city.alerts} alerts`);
        const m = await timeGet(ctx, client, path, ctx.sizes.pageRepeats);
        const anchor = await timeSql(ctx, searchPageSql(city.tenantId, s.text), ctx.sizes.pageRepeats);
        lines.push({
          label: `${s.label}: ${body.total.toLocaleString('en-US')} of ${city.alerts.toLocaleString('en-US')} alerts`,
          lumen: m.series,
          detail: `p99 ${m.p99.toFixed(1)} ms`,
          anchor: { label: 'bare SQL of the page and count, psql', series: anchor },
          ratio: ratioOf(m.series, anchor),
          checks: [check('p50 ≤ 50 ms', m.series.median <= 50)],
        });
      }
      return {
        lines,
        notes: [
          'Each alert carries search_text (generated: what the inbox row shows, unaccented and lower case) under a pg_trgm GIN index (migration 0091); every word of the query must appear in it, or the whole query is a pole code.',
          'Timed on the client over one keep-alive connection with a platform admin token. Lumen runs the page and the count as two statements at once; the anchor runs them as one (count as a subquery), rows to /dev/null.',
          ...(ctx.tools.psql ? [] : ['psql is missing, so the SQL anchor was skipped.']),
        ],
        params: { alerts: city.alerts, pageSize: PAGE_SIZE, sort: 'priority', requestsPerRun: ctx.sizes.pageRepeats, runs: ctx.opts.runs },
      };
    } finally {
      client.close();
    }
  },
};
