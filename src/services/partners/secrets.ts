import { sql } from 'kysely';
import { keyringOf, needsRewrap, openSecret, partnerSecretAad, sealSecret } from '../../lib/secret-box.js';
import type { ServiceDeps } from '../deps.js';

const COLUMNS = ['webhook_secret_enc', 'webhook_previous_secret_enc', 'polling_key_enc'] as const;
const LABELS: Record<(typeof COLUMNS)[number], string> = { webhook_secret_enc: 'webhook secret', webhook_previous_secret_enc: 'previous webhook secret', polling_key_enc: 'polling key' };

export interface RewrapResult {
  /** Stored secrets sealed again under LUMEN_SECRET_KEY. */
  rewrapped: number;
  /** Already sealed under it. */
  current: number;
  /** Partners with a secret that neither key opens (left as they are). */
  failed: { partnerCode: string; column: string; error: string }[];
}

/**
 * `lumen secrets rewrap`: seals every stored secret again under the current
 * LUMEN_SECRET_KEY, with its row bound as associated data, so that
 * LUMEN_SECRET_KEY_PREVIOUS can be dropped. One row at a time, each only if it did not
 * change meanwhile; safe to run again (what is current is left alone).
 */
export async function rewrapSecrets(deps: ServiceDeps, progress: (msg: string) => void = () => {}): Promise<RewrapResult> {
  const keys = keyringOf(deps.config);
  const result: RewrapResult = { rewrapped: 0, current: 0, failed: [] };
  const rows = await deps.db.selectFrom('external_system').select(['id', 'code', ...COLUMNS]).orderBy('code').execute();
  for (const row of rows) {
    for (const column of COLUMNS) {
      const sealed = row[column];
      if (!sealed) continue;
      if (!needsRewrap(keys, sealed)) {
        try {
          openSecret(keys, sealed, partnerSecretAad(row.id, column));
          result.current++;
        } catch (err) {
          result.failed.push({ partnerCode: row.code, column, error: (err as Error).message });
        }
        continue;
      }
      let plain: string;
      try {
        plain = openSecret(keys, sealed, partnerSecretAad(row.id, column));
      } catch (err) {
        result.failed.push({ partnerCode: row.code, column, error: (err as Error).message });
        continue;
      }
      const resealed = sealSecret(keys, plain, partnerSecretAad(row.id, column));
      const res = await sql`UPDATE external_system SET ${sql.ref(column)} = ${resealed} WHERE id = ${row.id} AND ${sql.ref(column)} = ${sealed}`.execute(deps.db);
      if (Number(res.numAffectedRows ?? 0) > 0) result.rewrapped++;
      progress(`${row.code}: ${LABELS[column]} sealed under the current key`);
    }
  }
  return result;
}

/**
 * The stored secrets that the configured keys cannot open, as one line for /readyz and
 * the log (null when every one opens). A secret nobody can open would make every webhook
 * of that partner fail, or its polling: Lumen must not say it is ready then.
 */
export async function undecryptableSecrets(deps: ServiceDeps): Promise<string | null> {
  const keys = keyringOf(deps.config);
  const rows = await deps.db
    .selectFrom('external_system')
    .select(['id', 'code', ...COLUMNS])
    .where((eb) => eb.or(COLUMNS.map((c) => eb(c, 'is not', null))))
    .execute();
  const bad: string[] = [];
  for (const row of rows) {
    for (const column of COLUMNS) {
      const sealed = row[column];
      if (!sealed) continue;
      try {
        openSecret(keys, sealed, partnerSecretAad(row.id, column));
      } catch {
        bad.push(`${row.code} (${LABELS[column]})`);
      }
    }
  }
  if (bad.length === 0) return null;
  return `${bad.length} stored secret(s) cannot be decrypted with LUMEN_SECRET_KEY${deps.config.previousSecretKey ? ' or LUMEN_SECRET_KEY_PREVIOUS' : ''}: ${bad.slice(0, 20).join(', ')}${bad.length > 20 ? ', …' : ''}. Set LUMEN_SECRET_KEY_PREVIOUS to the key they were sealed with, then run lumen secrets rewrap`;
}
