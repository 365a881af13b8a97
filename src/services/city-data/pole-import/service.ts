import { sql } from 'kysely';
import { AppError } from '../../../lib/errors.js';
import { lockPoleWritesExclusive } from '../../../db/repositories/city-data/pole.repository.js';
import { applyStaged, countStaged, createStage, dropStage, removeDuplicates, stageRows, type ApplyCounts, type StagedPole } from '../../../db/repositories/city-data/pole-import.repository.js';
import { findTenant } from '../../../db/repositories/tenant.repository.js';
import { detectFormat, isRowError, readPoleFile, UnusableFileError, type PoleFileFormat, type Progress, type RowError } from './parse.js';
import type { ServiceDeps } from '../../deps.js';
import { isUuid } from '../../tenants/index.js';

/** Rows per staging insert. */
const STAGE_BATCH = 5000;
/** Row errors listed in the summary (all are counted). */
const MAX_LISTED_ERRORS = 1000;
/** After this many changed rows the tables are analyzed, so plans see the new tenant's rows. */
const ANALYZE_AFTER = 10_000;
/**
 * work_mem of the importing session: the stage's grouping (repeated codes and
 * devices), its sort by code and its joins with pole hold a million-row file in
 * memory instead of spilling to disk. One connection, for the minutes of an import.
 */
const IMPORT_WORK_MEM = '64MB';

export interface PoleImportOptions {
  /** Import nothing when any row is rejected. Default false (good rows are imported, bad ones reported). */
  strict?: boolean;
  /** Check and count everything, then roll back. Default false. */
  dryRun?: boolean;
  /** Overrides the format found from the extension or the first byte. */
  format?: PoleFileFormat;
  onProgress?: (p: Progress & { phase: 'reading' | 'applying' }) => void;
}

export interface PoleImportSummary {
  file: string;
  format: PoleFileFormat;
  /** What `line` means in errors: a line of the file, or a feature of a FeatureCollection. */
  rowUnit: 'line' | 'feature';
  /** Rows read (header excluded). */
  rows: number;
  created: number;
  updated: number;
  unchanged: number;
  rejected: number;
  devices: { created: number; linked: number; unlinked: number };
  /** false for a dry run, or when --strict refused the file. */
  committed: boolean;
  errors: RowError[];
}

class RollBack extends Error {
  constructor(readonly counts: ApplyCounts) {
    super('dry run');
  }
}

/**
 * `lumen pole import`: CSV or GeoJSON, idempotent by code (a re-import updates what
 * changed and touches nothing else). Good rows are staged while the file streams;
 * everything is applied in one transaction at the end, so an unreadable file, a
 * crash or --strict with a bad row leaves nothing half-imported.
 *
 * Staging writes only the session's temporary table, in one short transaction per
 * batch, so it never holds back the visibility horizon (0016: any transaction with an
 * id does while it runs) for the minutes a million-row file takes to read. The
 * session's name says which phase runs, for pg_stat_activity.
 */
export async function importPoles(deps: ServiceDeps, tenantId: string, file: string, opts: PoleImportOptions = {}): Promise<PoleImportSummary> {
  if (!isUuid(tenantId) || !(await findTenant(deps.db, tenantId))) throw new AppError('not-found', { resource: `tenant ${tenantId}` });
  let format: PoleFileFormat;
  try {
    format = opts.format ?? (await detectFormat(file));
  } catch (err) {
    throw new UnusableFileError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const summary: PoleImportSummary = {
    file,
    format,
    rowUnit: format === 'geojson' ? 'feature' : 'line',
    rows: 0,
    created: 0,
    updated: 0,
    unchanged: 0,
    rejected: 0,
    devices: { created: 0, linked: 0, unlinked: 0 },
    committed: false,
    errors: [],
  };
  const reject = (e: RowError) => {
    summary.rejected++;
    if (summary.errors.length < MAX_LISTED_ERRORS) summary.errors.push(e);
  };

  return deps.db.connection().execute(async (conn) => {
    await sql`SET application_name = 'pole-import-staging'`.execute(conn);
    await sql`SELECT set_config('work_mem', ${IMPORT_WORK_MEM}, false)`.execute(conn);
    // One staging insert in flight while the next rows are read: the file is parsed
    // while the server stores the previous batch. Awaited before the next one is sent
    // (and before anything else runs on the connection), so its error surfaces there.
    let staging: Promise<void> = Promise.resolve();
    const stage = async (rows: StagedPole[]) => {
      await staging;
      if (rows.length === 0) return;
      staging = stageRows(conn, rows);
      staging.catch(() => {});
    };
    try {
      await createStage(conn);
      let batch: StagedPole[] = [];
      for await (const rows of readPoleFile(file, format, (p) => opts.onProgress?.({ ...p, phase: 'reading' }))) {
        for (const row of rows) {
          summary.rows++;
          if (isRowError(row)) {
            reject(row);
            continue;
          }
          batch.push(row);
          if (batch.length >= STAGE_BATCH) {
            await stage(batch);
            batch = [];
          }
        }
      }
      await stage(batch);
      await staging;

      for (const d of await removeDuplicates(conn)) {
        reject({ line: d.line, code: d.code, message: d.kind === 'code' ? `repeats the code of ${summary.rowUnit} ${d.firstLine}` : `gives the device of ${summary.rowUnit} ${d.firstLine} to a second pole` });
      }
      summary.errors.sort((a, b) => a.line - b.line);
      const staged = await countStaged(conn);
      if (summary.rows === 0) throw new UnusableFileError('the file has no rows');
      if (staged === 0) throw new UnusableFileError(`no usable row: all ${summary.rows} row(s) were rejected`);
      if (opts.strict && summary.rejected > 0) return summary;

      opts.onProgress?.({ bytes: 0, totalBytes: 0, rows: staged, phase: 'applying' });
      await sql`SET application_name = 'lumen-pole-import'`.execute(conn);
      let counts: ApplyCounts;
      try {
        counts = await conn.transaction().execute(async (tx) => {
          await lockPoleWritesExclusive(tx, tenantId);
          const c = await applyStaged(tx, tenantId);
          if (opts.dryRun) throw new RollBack(c);
          return c;
        });
        summary.committed = true;
      } catch (err) {
        if (!(err instanceof RollBack)) throw err;
        counts = err.counts;
      }
      summary.created = counts.created;
      summary.updated = counts.updated;
      summary.unchanged = staged - counts.created - counts.updated;
      summary.devices = { created: counts.devicesCreated, linked: counts.devicesLinked, unlinked: counts.devicesUnlinked };
      if (summary.committed && counts.created + counts.updated >= ANALYZE_AFTER) {
        // Statistics, so the next plans know the new rows: ANALYZE reads a fixed sample
        // whatever the tables' size. The visibility map of the pages written (index-only
        // list reads) is left to autovacuum, which inserts of 2% of a table start (0013);
        // a VACUUM here also went through every other tenant's changed pages and their
        // indexes, inside the import's time.
        await sql`SET application_name = 'pole-import-analyze'`.execute(conn);
        await sql`ANALYZE pole, telegestor`.execute(conn);
      }
      return summary;
    } finally {
      await staging.catch(() => {});
      await dropStage(conn).catch(() => {});
      await sql`RESET application_name`.execute(conn).catch(() => {});
      await sql`RESET work_mem`.execute(conn).catch(() => {});
    }
  });
}

export { UnusableFileError };
