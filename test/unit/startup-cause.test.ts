import { describe, expect, it } from 'vitest';
import { startupCause } from '../../src/db/embedded/process.js';

describe('why the embedded PostgreSQL did not start, in words', () => {
  it('names a full disk, a permission problem, a refused setting, or the first fatal line, without a path', () => {
    // Lines as PostgreSQL 18 writes them.
    expect(startupCause('2026-11-25 03:00:00.000 UTC [123] FATAL:  could not write lock file "/srv/lumen/postgres/postmaster.pid": No space left on device', false)).toMatch(/^the disk of the data directory is full/);
    expect(startupCause('', true)).toMatch(/^the disk of the data directory is full/);
    expect(startupCause('2026-11-25 03:00:00.000 UTC [123] FATAL:  could not open file "/srv/lumen/postgres/global/pg_control": Permission denied', false)).toBe('permission denied on the data directory (check its owner and mode)');
    expect(startupCause('2026-11-25 03:00:00.000 UTC [123] LOG:  invalid value for parameter "shared_buffers": "nonsense"\\n... FATAL:  configuration file "/srv/lumen/postgres/postgresql.auto.conf" contains errors', false)).toBe('PostgreSQL refuses a setting: invalid value for parameter "shared_buffers": "nonsense"');
    const other = startupCause('2026-11-25 03:00:00.000 UTC [123] FATAL:  data directory "/srv/lumen/postgres" has invalid permissions', false);
    expect(other).toBe('data directory <path> has invalid permissions');
    expect(startupCause('nothing useful', false)).toMatch(/no reason in its log/);
  });
});
