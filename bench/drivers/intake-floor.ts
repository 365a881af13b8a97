/**
 * The floor of the intake row: the plainest Node HTTP server that does the intake's
 * writes. Each POST reads and parses its JSON body, then runs the anchor's two
 * statements (bench/sql/intake-anchor.pgbench.sql: the numbers, then the order, the
 * alert, both histories and the stored answer) as named prepared statements through a
 * `pg` pool of Lumen's default size, and answers 201 with the stored body. No routing
 * table, authentication, validation, idempotency lookup or request hash: what is left
 * is what any Node server pays to put these rows in PostgreSQL over HTTP on the same
 * machine, on the Node release the executable embeds when the bench runs on it.
 *
 *   fork('bench/drivers/intake-floor.ts', [JSON {databaseUrl, tenant, partner, year, poolSize}])
 *   child -> {type: 'listening', port, pid}
 */
import http from 'node:http';
import pg from 'pg';

export type FloorMessage = { type: 'listening'; port: number; pid: number };

export interface FloorInput {
  databaseUrl: string;
  tenant: string;
  partner: string;
  year: number;
  poolSize: number;
}

const input = JSON.parse(process.argv[2] ?? '{}') as FloorInput;
if (!input.databaseUrl || !process.send) {
  process.stderr.write('usage: fork intake-floor.ts with {"databaseUrl","tenant","partner","year","poolSize"} as its argument\n');
  process.exit(2);
}

const NUMBERS = `WITH taken AS (
  INSERT INTO tenant_counter AS c (tenant_id, name, year, value)
  SELECT $1::uuid, n.name, n.year, 1
    FROM (VALUES (1, 'alert', 0), (2, 'service_order', $2::int)) AS n(ord, name, year)
   ORDER BY n.ord
  ON CONFLICT (tenant_id, name, year) DO UPDATE SET value = c.value + 1
  RETURNING c.name, c.value, set_config('synchronous_commit', 'off', true) AS commit_mode
)
SELECT max(value) FILTER (WHERE name = 'alert') AS alert_number, max(value) FILTER (WHERE name = 'service_order') AS order_seq FROM taken`;

// The anchor's second statement with its pgbench variables as parameters:
// $1 tenant, $2 partner, $3 year, $4 order_seq, $5 alert_number, $6 protocolNumber, $7 Idempotency-Key.
const WRITE = `WITH ids AS MATERIALIZED (
  SELECT gen_random_uuid() AS order_id, gen_random_uuid() AS alert_id, $6::text AS protocol_number,
         'OS-' || $3::int::text || '-' || lpad($4::bigint::text, greatest(5, length($4::bigint::text)), '0') AS order_number
), new_order AS (
  INSERT INTO service_order (id, tenant_id, number, status, priority, reason_code, address, neighborhood, latitude, longitude, sla_due_at)
  SELECT order_id, $1::uuid, order_number, 'OPEN', 'Medium', 'EXTERNAL_OTHER',
         'Rua Augusta, 1500', 'Consolação', -23.5558, -46.6623, now() + make_interval(hours => 24)
    FROM ids
), new_order_history AS (
  INSERT INTO service_order_status_history (service_order_id, from_status, to_status, actor, note)
  SELECT order_id, NULL, 'OPEN', 'partner-bench', 'created at intake of ' || protocol_number FROM ids
), new_alert AS (
  INSERT INTO alert (id, tenant_id, external_system_id, protocol_number, alert_number, status, requested_at, requester_name,
                     requester_phone, lamp_type, partner_reason_code, reason_code, priority, sla_due_at, address_street,
                     address_number, address_neighborhood, address_reference, latitude, longitude, location_source,
                     description, additional_notes, service_order_id)
  SELECT alert_id, $1::uuid, $2::uuid, protocol_number, $5::bigint, 'Linked', now() - interval '5 minutes', 'Maria da Silva',
         '+5511987654321', 'LED', NULL, 'EXTERNAL_OTHER', 'Medium', now() + make_interval(hours => 24), 'Rua Augusta',
         '1500', 'Consolação', 'Em frente à padaria', -23.5558, -46.6623, 'payload',
         'Lâmpada apagada há três noites', 'Poste com fiação exposta', order_id
    FROM ids
), new_alert_history AS (
  INSERT INTO alert_status_history (alert_id, from_status, to_status, actor) SELECT alert_id, NULL, 'Linked', 'partner-bench' FROM ids
), body AS (
  SELECT json_build_object(
           'id', order_id::text, 'internalProtocol', order_number,
           'protocolNumber', protocol_number, 'assetType', 'POLE', 'status', 'OPEN', 'priority', 'Medium', 'createdAt', now(),
           'alert', json_build_object('id', alert_id::text, 'alertNumber', $5::bigint, 'alertReasonCode', 'EXTERNAL_OTHER',
             'alertReasonName', 'Outros (sistema externo)', 'requesterName', 'Maria da Silva', 'requesterPhone', '+5511987654321',
             'description', 'Lâmpada apagada há três noites', 'additionalNotes', 'Poste com fiação exposta', 'lampType', 'LED',
             'externalRequestedAt', now() - interval '5 minutes', 'latitude', -23.5558, 'longitude', -46.6623,
             'status', 'Linked', 'attachments', json_build_array()))::text AS r, alert_id
    FROM ids
), stored AS (
  INSERT INTO idempotency_key (external_system_id, key, request_hash, alert_id, response_status, response_body)
  SELECT $2::uuid, $7::uuid, sha256(convert_to(r, 'UTF8')), alert_id, 201, r FROM body
)
SELECT r FROM body`;

const pool = new pg.Pool({ connectionString: input.databaseUrl, max: input.poolSize, application_name: 'bench-intake-floor' });

function answer(res: http.ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

async function intake(body: Buffer, key: string): Promise<string> {
  const request = JSON.parse(body.toString('utf8')) as { protocolNumber?: unknown };
  if (typeof request.protocolNumber !== 'string') throw new Error('protocolNumber is missing');
  const numbers = await pool.query<{ alert_number: string; order_seq: string }>({ name: 'floor-numbers', text: NUMBERS, values: [input.tenant, input.year] });
  const n = numbers.rows[0]!;
  const written = await pool.query<{ r: string }>({
    name: 'floor-write',
    text: WRITE,
    values: [input.tenant, input.partner, input.year, n.order_seq, n.alert_number, request.protocolNumber, key],
  });
  return written.rows[0]!.r;
}

const server = http.createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const key = req.headers['idempotency-key'];
    if (req.method !== 'POST' || typeof key !== 'string') return answer(res, 400, '{"title":"POST with an Idempotency-Key"}');
    intake(Buffer.concat(chunks), key).then(
      (r) => answer(res, 201, r),
      (err: Error) => answer(res, 500, JSON.stringify({ title: err.message })),
    );
  });
});

server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.send!({ type: 'listening', port: typeof address === 'object' && address ? address.port : 0, pid: process.pid } satisfies FloorMessage);
});
process.on('disconnect', () => {
  server.close();
  void pool.end().finally(() => process.exit(0));
});
