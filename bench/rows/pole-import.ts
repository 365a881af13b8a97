import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import path from 'node:path';
import { hasCommand, lumenCli } from '../harness/lumen.js';
import { poleImportFloorScript } from '../harness/pole-sql.js';
import { psqlWall } from '../harness/postgres.js';
import { check, ratioOf, series, type Line } from '../harness/results.js';
import { median } from '../harness/stats.js';
import { runOk } from '../harness/tools.js';
import { Pending, type BenchContext, type RowDefinition } from '../harness/context.js';

const STREETS = ['Rua Augusta', 'Avenida Paulista', 'Rua da Consolação', 'Rua Vergueiro', 'Avenida Ipiranga', 'Rua Oscar Freire', 'Rua Teodoro Sampaio', 'Rua "Dona" Veridiana'];
const HOODS = ['Consolação', 'Bela Vista', 'Pinheiros', 'Jardins', 'Liberdade', 'Vila Mariana', 'Moema'];

function csvField(value: string): string {
  return /[",\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** The import file: the issue's CSV header, 70% of poles with a device, some quoted fields. */
async function writeCsv(file: string, rows: number): Promise<void> {
  const out = createWriteStream(file);
  const write = async (s: string) => {
    if (!out.write(s)) await once(out, 'drain');
  };
  await write('code,address,neighborhood,latitude,longitude,active,device_identifier\n');
  let chunk = '';
  for (let i = 1; i <= rows; i++) {
    const street = STREETS[i % STREETS.length]!;
    const lat = (-23.55 + (((i * 7919) % 20000) - 10000) / 100000).toFixed(6);
    const lon = (-46.63 + (((i * 104729) % 20000) - 10000) / 100000).toFixed(6);
    const device = i % 10 < 7 ? `IMP-TG-${i}` : '';
    chunk += `IMP-${String(i).padStart(7, '0')},${csvField(`${street}, ${(i % 2000) + 1}`)},${HOODS[i % HOODS.length]},${lat},${lon},${i % 50 !== 0},${device}\n`;
    if (chunk.length > 1 << 16) {
      await write(chunk);
      chunk = '';
    }
  }
  await write(chunk);
  out.end();
  await once(out, 'finish');
}

const BARE_TABLE = 'bench_pole_import_copy';

/**
 * `lumen pole import --tenant ID FILE` of N CSV rows into a new tenant each run (all
 * rows created, telegestors included), timed from the command's start to its exit.
 * Anchor (the issue's): psql's \copy of the same file into a bare table (same
 * columns, no index, no constraint), truncated between runs. Second reference, the
 * fair floor: the same file copied by psql and inserted with plain SQL into pole and
 * telegestor of another new tenant (poleImportFloorScript), so the report also says
 * how far Lumen is from what its own tables cost.
 */
export const poleImportRow: RowDefinition = {
  id: 'pole-import',
  title: 'Pole import: CSV rows',
  async run(ctx: BenchContext) {
    if (!(await hasCommand(ctx.setup, ['pole', 'import']))) throw new Pending('pole import (lumen pole import) not built yet');
    const n = ctx.sizes.importRows;
    const file = path.join(ctx.tmpDir, `poles-${n}.csv`);
    ctx.log(`writing ${n.toLocaleString('en-US')} CSV rows`);
    await writeCsv(file, n);
    if (ctx.tools.psql) {
      await ctx.pool.query(
        `CREATE TABLE IF NOT EXISTS ${BARE_TABLE} (code text, address text, neighborhood text, latitude double precision, longitude double precision, active boolean, device_identifier text)`,
      );
    }
    const imports: number[] = [];
    const copies: number[] = [];
    const floors: number[] = [];
    for (let run = 0; run < ctx.opts.runs; run++) {
      const tenant = await ctx.createTenant(`Bench import ${run + 1}`, 'automatic');
      ctx.log(`import run ${run + 1}/${ctx.opts.runs}: lumen pole import`);
      const r = await lumenCli(ctx.setup, ['pole', 'import', '--tenant', tenant.id, file, '--json']);
      if (r.code !== 0) throw new Error(`lumen pole import exited with ${r.code}: ${r.stderr.trim().slice(-1000)}`);
      const summary = JSON.parse(r.stdout) as { rows: number; created: number; rejected: number };
      if (summary.created !== n || summary.rejected !== 0) throw new Error(`lumen pole import: ${JSON.stringify(summary).slice(0, 500)}`);
      imports.push(r.ms / 1000);
      if (ctx.tools.psql) {
        ctx.log(`import run ${run + 1}/${ctx.opts.runs}: \\copy anchor`);
        await ctx.pool.query(`TRUNCATE ${BARE_TABLE}`);
        copies.push((await psqlWall(ctx.tools.psql, ctx.db.url, `\\copy ${BARE_TABLE} FROM '${file}' WITH (FORMAT csv, HEADER true)`)) / 1000);
        const floorTenant = await ctx.createTenant(`Bench import floor ${run + 1}`, 'automatic');
        ctx.log(`import run ${run + 1}/${ctx.opts.runs}: fair floor (\\copy, then INSERT … SELECT into pole and telegestor)`);
        const floor = await runOk(ctx.tools.psql, ['-X', '-q', ctx.db.url], { input: poleImportFloorScript(floorTenant.id, file), discardStdout: true, env: { ...process.env, PGAPPNAME: 'bench-psql' } });
        floors.push(floor.ms / 1000);
      }
    }
    await ctx.pool.query(`DROP TABLE IF EXISTS ${BARE_TABLE}`);
    const lumen = series('s', imports, median);
    const anchor = copies.length ? series('s', copies, median) : null;
    const ratio = ratioOf(lumen, anchor);
    const floor = floors.length ? series('s', floors, median) : null;
    const lines: Line[] = [
      {
        label: `${n.toLocaleString('en-US')} rows, 70% with a telegestor, into an empty tenant`,
        lumen,
        detail: `${Math.round(n / lumen.median).toLocaleString('en-US')} rows/s, whole command (start, import, exit)`,
        anchor: { label: 'psql \\copy of the same CSV into a bare table', series: anchor, ...(anchor ? {} : { note: 'psql missing' }) },
        ratio,
        checks: [check('≤ 5× COPY', ratio === null ? null : ratio <= 5)],
      },
      {
        label: 'the same imports against the fair floor',
        lumen,
        anchor: {
          label: "psql \\copy into a temporary table, then INSERT … SELECT into pole and telegestor: Lumen's own indexes, triggers and constraints",
          series: floor,
          ...(floor ? {} : { note: 'psql missing' }),
        },
        ratio: ratioOf(lumen, floor),
        checks: [],
      },
    ];
    return { lines, notes: [], params: { rows: n, runs: ctx.opts.runs } };
  },
};
