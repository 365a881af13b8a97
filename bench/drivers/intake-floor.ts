/**
 * The floor of the intake row: the plainest Node HTTP server that does the intake's
 * writes. Each POST reads and parses its JSON body, then runs the anchor's two
 * statements, read from bench/sql/intake-anchor.pgbench.sql (the numbers, then the
 * order, the alert, both histories and the stored answer), as named prepared statements
 * through a `pg` pool of Lumen's default size, and answers 201 with the stored body. No routing
 * table, authentication, validation, idempotency lookup or request hash: what is left
 * is what any Node server pays to put these rows in PostgreSQL over HTTP on the same
 * machine, on the Node release the executable embeds when the bench runs on it.
 *
 *   fork('bench/drivers/intake-floor.ts', [JSON {databaseUrl, tenant, partner, year, poolSize}])
 *   child -> {type: 'listening', port, pid}; parent -> {type: 'gc'}, child -> {type: 'gc', pauses, ms, long, majorPauses, majorMs}
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

export type FloorMessage = { type: 'listening'; port: number; pid: number } | { type: 'gc'; pauses: number; ms: number; long: number; majorPauses: number; majorMs: number };
/** parent -> child: the GC totals so far, answered with {type: 'gc', ...}. */
export type FloorRequest = { type: 'gc' };

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

/**
 * The anchor's script as two statements for `pg`: the first up to `\gset`, the second after
 * it, each pgbench variable a parameter (as pgbench itself sends them with `-M extended`),
 * and the second returning the stored answer, which the floor sends back as Lumen does.
 */
function anchorStatements(): { numbers: Statement; write: Statement } {
  const script = readFileSync(fileURLToPath(new URL('../sql/intake-anchor.pgbench.sql', import.meta.url)), 'utf8')
    .split('\n')
    .filter((line) => !line.startsWith('--'))
    .join('\n');
  const [numbers, write] = script.split('\\gset');
  if (!numbers || !write) throw new Error('bench/sql/intake-anchor.pgbench.sql: expected two statements around \\gset');
  return { numbers: parameterized(numbers), write: parameterized(`${write.trim().replace(/;$/, '')} RETURNING response_body`) };
}

interface Statement {
  text: string;
  /** The pgbench variable of each parameter, in order. */
  variables: string[];
}

function parameterized(sqlText: string): Statement {
  const variables: string[] = [];
  const text = sqlText.trim().replace(/(?<!:):([a-z_]+)/g, (_, name: string) => {
    if (!variables.includes(name)) variables.push(name);
    return `$${variables.indexOf(name) + 1}`;
  });
  return { text, variables };
}

const statements = anchorStatements();

const pool = new pg.Pool({ connectionString: input.databaseUrl, max: input.poolSize, application_name: 'bench-intake-floor' });

function answer(res: http.ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function run(name: string, statement: Statement, vars: Record<string, string | number>): Promise<pg.QueryResult> {
  return pool.query({ name, text: statement.text, values: statement.variables.map((v) => vars[v]) });
}

async function intake(body: Buffer): Promise<string> {
  const request = JSON.parse(body.toString('utf8')) as { protocolNumber?: unknown };
  if (typeof request.protocolNumber !== 'string') throw new Error('protocolNumber is missing');
  const vars: Record<string, string | number> = { tenant: input.tenant, partner: input.partner, year: input.year };
  const numbers = (await run('floor-numbers', statements.numbers, vars)).rows[0] as { alert_number: string; order_seq: string };
  const written = await run('floor-write', statements.write, { ...vars, alert_number: numbers.alert_number, order_seq: numbers.order_seq });
  return (written.rows[0] as { response_body: string }).response_body;
}

const server = http.createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    if (req.method !== 'POST') return answer(res, 405, '{"title":"POST only"}');
    intake(Buffer.concat(chunks)).then(
      (r) => answer(res, 201, r),
      (err: Error) => answer(res, 500, JSON.stringify({ title: err.message })),
    );
  });
});

server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.send!({ type: 'listening', port: typeof address === 'object' && address ? address.port : 0, pid: process.pid } satisfies FloorMessage);
});
// V8's GC pauses since the start, as Lumen's own metrics count them (bench/harness/gc.ts).
const gc = { pauses: 0, ms: 0, long: 0, majorPauses: 0, majorMs: 0 };
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    gc.pauses++;
    gc.ms += e.duration;
    if (e.duration >= 10) gc.long++;
    // NODE_PERFORMANCE_GC_MAJOR: a full mark-compact of the old generation.
    if (((e as { detail?: { kind?: number } }).detail)?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
      gc.majorPauses++;
      gc.majorMs += e.duration;
    }
  }
}).observe({ entryTypes: ['gc'] });
process.on('message', (m: FloorRequest) => {
  if (m.type === 'gc') process.send!({ type: 'gc', ...gc } satisfies FloorMessage);
});
process.on('disconnect', () => {
  server.close();
  void pool.end().finally(() => process.exit(0));
});
