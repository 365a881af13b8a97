import { createHash } from 'node:crypto';
import type { RuntimeDeps } from '../deps.js';
import { MAX_JSON_DEPTH } from '../../lib/openapi.js';
import { resolveRejectedItems, upsertRejectedItem } from '../../db/repositories/partner-poll.repository.js';
import { PollAborted, PollError } from './fetch.js';
import type { IntakeCaller } from '../intake/index.js';
import { submitPolledItem } from './intake.js';

/** Strings longer than this (base64 photos, mostly) are shortened in the stored copy of a refused item. */
export const STORED_STRING_LIMIT = 8192;

/** JSON with object keys sorted at every level: equal items give equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}

/** A note in place of what lies deeper than MAX_JSON_DEPTH (such an item is refused for it): a partner's item may nest deeper than the call stack. */
const TOO_DEEP = `[nested deeper than ${MAX_JSON_DEPTH} levels, not kept]`;

function depthLimited(item: unknown, depth = 0): unknown {
  if (!item || typeof item !== 'object') return item;
  if (depth >= MAX_JSON_DEPTH) return TOO_DEEP;
  if (Array.isArray(item)) return item.map((v) => depthLimited(v, depth + 1));
  return Object.fromEntries(Object.entries(item as Record<string, unknown>).map(([k, v]) => [k, depthLimited(v, depth + 1)]));
}

export function itemHash(item: unknown): Buffer {
  return createHash('sha256').update(canonicalJson(depthLimited(item)) ?? 'undefined').digest();
}

/** jsonb cannot hold U+0000 or a lone surrogate (such an item is refused for it): kept as U+FFFD. */
const withoutNul = (s: string): string => s.replaceAll('\u0000', '\uFFFD').replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');

/** The item as operators see it: long strings replaced by a note of their size, NUL and excessive depth made storable. */
export function storedCopy(item: unknown, depth = 0): unknown {
  if (typeof item === 'string') return item.length > STORED_STRING_LIMIT ? `[${item.length} characters not kept]` : withoutNul(item);
  if (item && typeof item === 'object' && depth >= MAX_JSON_DEPTH) return TOO_DEEP;
  if (Array.isArray(item)) return item.map((v) => storedCopy(v, depth + 1));
  if (item && typeof item === 'object') return Object.fromEntries(Object.entries(item as Record<string, unknown>).map(([k, v]) => [withoutNul(k), storedCopy(v, depth + 1)]));
  return item === undefined ? null : item;
}

/** The item's protocolNumber when it has a usable one. */
export function protocolNumberOf(item: unknown): string | null {
  if (!item || typeof item !== 'object' || Array.isArray(item)) return null;
  const p = (item as Record<string, unknown>).protocolNumber;
  return typeof p === 'string' && p.trim() !== '' ? p.slice(0, 200) : null;
}

export interface StoredBatch {
  /** Taken in: new requests and resends of known ones. */
  readonly accepted: number;
  /** Of those, new requests (a new alert). */
  readonly created: number;
  readonly rejected: number;
}

/**
 * Every item of a batch, in order, through the intake path. A refused item is kept
 * as a rejected inbound item and the batch goes on; any other failure stops the
 * batch (PollError 'intake'): the cursor then stays and the whole batch is read
 * again later, which idempotency by protocolNumber makes harmless.
 */
export async function storeBatch(deps: RuntimeDeps, caller: IntakeCaller, since: Date | null, items: readonly unknown[], signal: AbortSignal): Promise<StoredBatch> {
  let accepted = 0;
  let created = 0;
  let rejected = 0;
  for (const [index, item] of items.entries()) {
    if (signal.aborted) throw new PollAborted();
    const protocolNumber = protocolNumberOf(item);
    let outcome;
    try {
      outcome = await submitPolledItem(deps, caller, item, signal);
    } catch (err) {
      if (signal.aborted) throw new PollAborted();
      const which = protocolNumber ? `protocolNumber ${protocolNumber}` : `item #${index + 1}`;
      deps.log.error({ err, externalSystemId: caller.externalSystemId, item: which }, 'partner poll: intake failed on an item');
      throw new PollError('intake', `intake failed on ${which}: ${(err as Error).message ?? String(err)}`);
    }
    if (outcome.kind === 'accepted') {
      accepted++;
      if (outcome.status === 201) created++;
      if (protocolNumber) await resolveRejectedItems(deps.db, caller.externalSystemId, protocolNumber);
    } else {
      rejected++;
      await upsertRejectedItem(deps.db, {
        externalSystemId: caller.externalSystemId,
        tenantId: caller.tenantId,
        protocolNumber,
        item: storedCopy(item),
        itemHash: itemHash(item),
        problemCode: outcome.code,
        // A reason may point at a property whose name holds NUL.
        reasons: outcome.reasons.map((r) => ({ pointer: withoutNul(r.pointer), message: withoutNul(r.message) })),
        since,
      });
    }
  }
  return { accepted, created, rejected };
}
