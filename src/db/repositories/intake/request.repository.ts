import { sql, type Insertable, type RawBuilder } from 'kysely';
import type { Executor } from '../../database.js';
import type { AlertStatus, AlertTable, ServiceOrderTable } from '../../tables/domain.js';
import type { VersionedAlertRow } from './alert.repository.js';
import type { IdempotencyKeyRow } from './idempotency.repository.js';
import { DEFAULT_REASON_CODE, mappedReasonCode, type ReasonRow } from '../operations/reason.repository.js';
import type { TenantRow } from '../tenant.repository.js';

// The statements of one intake request besides the number allocation: what it reads
// once, what it reads before each attempt, and the write of a new alert.

/** Who sends a request and for which tenant, with the reason the request's code maps to. */
export interface IntakeSetting {
  tenant: Pick<TenantRow, 'id' | 'name' | 'ibge_code' | 'intake_policy'>;
  partnerCode: string;
  reason: ReasonRow;
}

/**
 * The partner, its tenant and the reason `partnerReasonCode` maps to for this partner
 * (see mappedReasonCode), in one statement. Undefined when the partner is not the
 * tenant's, or the tenant has no EXTERNAL_OTHER reason.
 */
export async function findIntakeSetting(
  db: Executor,
  externalSystemId: string,
  tenantId: string,
  partnerReasonCode: string | null,
  /** The code is one of the tenant's own reasons (an Open311 service_code), not a partner code to map. Default false. */
  internalReason = false,
): Promise<IntakeSetting | undefined> {
  const reasonCode = internalReason
    ? sql<string>`coalesce((SELECT x.code FROM reason x WHERE x.tenant_id = ${tenantId} AND x.code = ${partnerReasonCode}), ${DEFAULT_REASON_CODE})`
    : mappedReasonCode(externalSystemId, tenantId, partnerReasonCode);
  const row = await db
    .selectFrom('external_system as es')
    .innerJoin('tenant as t', 't.id', 'es.tenant_id')
    .innerJoin('reason as r', (j) => j.onRef('r.tenant_id', '=', 't.id').on('r.code', '=', reasonCode))
    .selectAll('r')
    .select(['es.code as partner_code', 't.name as tenant_name', 't.ibge_code as tenant_ibge_code', 't.intake_policy as tenant_intake_policy'])
    .where('es.id', '=', externalSystemId)
    .where('t.id', '=', tenantId)
    .executeTakeFirst();
  if (!row) return undefined;
  const { partner_code, tenant_name, tenant_ibge_code, tenant_intake_policy, ...reason } = row;
  return { tenant: { id: tenantId, name: tenant_name, ibge_code: tenant_ibge_code, intake_policy: tenant_intake_policy }, partnerCode: partner_code, reason };
}

/** What is stored of a request before an attempt: the answer kept for its key, and the alert of its protocolNumber. */
export interface IntakeState {
  stored: Pick<IdempotencyKeyRow, 'request_hash' | 'response_body'> | undefined;
  alert: VersionedAlertRow | undefined;
}

/** Both in one statement (one snapshot). `key` null: no key was sent. */
export async function findIntakeState(db: Executor, externalSystemId: string, key: string | null, protocolNumber: string): Promise<IntakeState> {
  const row = await db
    .selectFrom(sql<{ one: number }>`(VALUES (1))`.as('one'))
    .leftJoin('idempotency_key as k', (j) => j.on('k.external_system_id', '=', externalSystemId).on('k.key', '=', key ?? sql<string>`NULL`))
    .leftJoin('alert as a', (j) => j.on('a.external_system_id', '=', externalSystemId).on('a.protocol_number', '=', protocolNumber))
    .selectAll('a')
    .select([sql<string>`a.xmin::text`.as('row_version'), 'k.request_hash as key_request_hash', 'k.response_body as key_response_body'])
    .executeTakeFirstOrThrow();
  const { key_request_hash, key_response_body, ...alert } = row;
  return {
    stored: key_request_hash !== null && key_response_body !== null ? { request_hash: key_request_hash, response_body: key_response_body } : undefined,
    alert: alert.id !== null ? (alert as VersionedAlertRow) : undefined,
  };
}

/** The rows of a new alert, with ids and numbers already known. */
export interface NewIntake {
  /** The order created with it (automatic mode); null = the alert waits for triage. */
  order: (Omit<Insertable<ServiceOrderTable>, 'sla_due_at' | 'status'> & { id: string }) | null;
  alert: Omit<Insertable<AlertTable>, 'sla_due_at' | 'status'> & { id: string; status: AlertStatus };
  /** sla_due_at of alert and order: now() + slaHours, in the database clock. */
  slaHours: number;
  /** Status-history actor (partner:<code>) and the order's history note. */
  actor: string;
  orderNote: string;
  /** Stored with the response when the request sent an Idempotency-Key. */
  idempotency: { external_system_id: string; key: string; request_hash: Buffer } | null;
  /**
   * The 201 body as JSON text, cut where the value of `createdAt` goes: the database
   * puts the transaction's now() there, the very value of the rows' created_at.
   */
  response: { before: string; after: string };
}

/**
 * Writes a new alert in ONE statement: the order and its first status-history row,
 * the alert and its first status-history row, and the Idempotency-Key record with the
 * response body. Returns that body (with createdAt filled in), so the 201 answer and a
 * later replay are the same text. Data-modifying CTEs all run to completion; the
 * foreign keys between the new rows are checked at the end of the statement.
 *
 * Nothing is locked beforehand: the unique constraints on (partner, protocolNumber)
 * and (partner, Idempotency-Key) decide between simultaneous requests, and the loser
 * fails with unique_violation (23505). Run it on the pool
 * (autocommit) when nothing else is written, or in the transaction that writes the rest.
 */
export function newIntakeStatement(db: Executor, n: NewIntake): RawBuilder<{ response: string }> {
  const slaDue = sql<Date>`now() + make_interval(hours => ${n.slaHours})`;
  const ctes: RawBuilder<unknown>[] = [
    sql`body AS (
      SELECT ${n.response.before}::text || to_json(to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text || ${n.response.after}::text AS response
    )`,
  ];
  if (n.order) {
    ctes.push(sql`new_order AS (${db.insertInto('service_order').values({ ...n.order, status: 'OPEN', sla_due_at: slaDue })})`);
    ctes.push(
      sql`new_order_history AS (${db
        .insertInto('service_order_status_history')
        .values({ service_order_id: n.order.id, from_status: null, to_status: 'OPEN', actor: n.actor, note: n.orderNote })})`,
    );
  }
  ctes.push(sql`new_alert AS (${db.insertInto('alert').values({ ...n.alert, sla_due_at: slaDue })})`);
  ctes.push(
    sql`new_alert_history AS (${db.insertInto('alert_status_history').values({ alert_id: n.alert.id, from_status: null, to_status: n.alert.status, actor: n.actor, note: null })})`,
  );
  if (n.idempotency) {
    const k = n.idempotency;
    ctes.push(sql`new_key AS (
      INSERT INTO idempotency_key (external_system_id, key, request_hash, alert_id, response_status, response_body)
      SELECT ${k.external_system_id}::uuid, ${k.key}::uuid, ${k.request_hash}::bytea, ${n.alert.id}::uuid, 201, response FROM body
    )`);
  }
  return sql<{ response: string }>`WITH ${sql.join(ctes, sql`, `)} SELECT response FROM body`;
}

export async function insertNewIntake(db: Executor, n: NewIntake): Promise<string> {
  const { rows } = await newIntakeStatement(db, n).execute(db);
  return rows[0]!.response;
}
