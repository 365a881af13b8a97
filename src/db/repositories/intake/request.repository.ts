import { sql, type CompiledQuery, type Insertable, type RawBuilder } from 'kysely';
import { ShapeCache } from '../../compiled-shapes.js';
import type { Database, Executor } from '../../database.js';
import { serviceOrderNumber, type AllocatedNumbers } from '../counter.repository.js';
import type { AlertStatus, AlertTable, ServiceOrderTable } from '../../tables/domain.js';
import type { VersionedAlertRow } from './alert.repository.js';
import type { IdempotencyKeyRow } from './idempotency.repository.js';
import { DEFAULT_REASON_CODE, mappedReasonCode, type ReasonRow } from '../operations/reason.repository.js';
import { boxAround, nearestPoleIdExpression, type Box } from '../operations/pole-map.repository.js';
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
 * The reason an intake's code names: a partner code mapped for this partner (see
 * mappedReasonCode), or, with `internalReason`, one of the tenant's own codes (an
 * Open311 service_code), EXTERNAL_OTHER when it has none of that code.
 */
function intakeReasonCode(externalSystemId: string, tenantId: string, code: string | null, internalReason: boolean): RawBuilder<string> {
  return internalReason
    ? sql<string>`coalesce((SELECT x.code FROM reason x WHERE x.tenant_id = ${tenantId} AND x.code = ${code}), ${DEFAULT_REASON_CODE})`
    : mappedReasonCode(externalSystemId, tenantId, code);
}

/** What is stored of a request before an attempt: the answer kept for its key, and the alert of its protocolNumber. */
export interface IntakeState {
  stored: Pick<IdempotencyKeyRow, 'request_hash' | 'response_body'> | undefined;
  alert: VersionedAlertRow | undefined;
}

/** Both in one statement (one snapshot). `key` null: no key was sent. */
export async function findIntakeState(db: Executor, externalSystemId: string, key: string | null, protocolNumber: string): Promise<IntakeState> {
  const row = await stateQuery(db, externalSystemId, key, protocolNumber).executeTakeFirstOrThrow();
  return stateOf(row);
}

/** Numbers to take with the reads of a new request (see findIntakeStart). */
export interface StartNumbers {
  /** The caller may create service orders: a tenant in automatic mode then gets an order number too. */
  readonly canCreateOrders: boolean;
  /** The service-order year (UTC), as allocateNumbers takes it. */
  readonly year: number;
}

/** What the first round of a request learns in its one statement. */
export interface IntakeStart {
  setting: IntakeSetting | undefined;
  state: IntakeState;
  /** Taken when the request is new (no stored key, no alert) and its setting was found; null otherwise. */
  numbers: AllocatedNumbers | null;
}

/**
 * The first round's reads and, for a request that turns out to be new, its numbers, in
 * ONE statement: findIntakeState (the stored key, the alert), the setting (the partner,
 * its tenant and the reason `partnerReasonCode` maps to for this partner, see
 * mappedReasonCode; undefined when the partner is not the tenant's or the tenant has
 * no EXTERNAL_OTHER reason), and, only when neither a key nor an alert was found and
 * the setting was, the alert number and (automatic mode with `canCreateOrders`) the
 * order number, from the city's sequences as allocateNumbers takes them.
 *
 * The statement runs on the pool and commits on its own, asynchronously like
 * allocateNumbers (set_config beside the numbers, for this transaction only; the same
 * argument: the request's write commits synchronously later and flushes this one's WAL
 * with it). A replay or a resend takes no number. Numbers taken by a request that then
 * fails stay unused (a gap).
 *
 * The write is a statement of its own because what it writes depends on what this one
 * found (an answer to replay, an alert to compare), which the service decides.
 */
export async function findIntakeStart(
  db: Database,
  externalSystemId: string,
  tenantId: string,
  partnerReasonCode: string | null,
  key: string | null,
  protocolNumber: string,
  numbers: StartNumbers,
  /** The code is one of the tenant's own reasons (an Open311 service_code), not a partner code to map. Default false. */
  internalReason = false,
): Promise<IntakeStart> {
  if (db.isTransaction) throw new Error('findIntakeStart takes numbers in its own transaction: pass the pool, not a transaction');
  const values: StartValues = { externalSystemId, tenantId, partnerReasonCode, key, protocolNumber, year: numbers.year, canCreateOrders: numbers.canCreateOrders };
  const { rows } = await db.executeQuery(compiledIntakeStart(db, values, internalReason));
  const {
    n_alert,
    n_order,
    n_async,
    s_partner_code,
    s_tenant_name,
    s_tenant_ibge_code,
    s_tenant_intake_policy,
    s_r_tenant_id,
    s_r_code,
    s_r_name_pt,
    s_r_name_en,
    s_r_priority,
    s_r_sla_hours,
    s_r_created_at,
    s_r_updated_at,
    ...state
  } = rows[0]!;
  if (n_async === false) throw new Error('number allocation did not switch its commit to asynchronous');
  const found = s_partner_code !== null && s_tenant_name !== null && s_tenant_intake_policy !== null && s_r_tenant_id !== null && s_r_code !== null && s_r_name_pt !== null && s_r_name_en !== null && s_r_priority !== null && s_r_sla_hours !== null && s_r_created_at !== null && s_r_updated_at !== null;
  return {
    setting: found
      ? {
          tenant: { id: tenantId, name: s_tenant_name, ibge_code: s_tenant_ibge_code, intake_policy: s_tenant_intake_policy },
          partnerCode: s_partner_code,
          reason: { tenant_id: s_r_tenant_id, code: s_r_code, name_pt: s_r_name_pt, name_en: s_r_name_en, priority: s_r_priority, sla_hours: s_r_sla_hours, created_at: s_r_created_at, updated_at: s_r_updated_at },
        }
      : undefined,
    state: stateOf(state),
    numbers: n_alert === null ? null : { alertNumber: Number(n_alert), serviceOrderNumber: n_order === null ? null : serviceOrderNumber(numbers.year, Number(n_order)) },
  };
}

/** The values of findIntakeStart's statement (its shape: whether the reason code is the tenant's own). */
export interface StartValues {
  externalSystemId: string;
  tenantId: string;
  partnerReasonCode: string | null;
  key: string | null;
  protocolNumber: string;
  year: number;
  canCreateOrders: boolean;
}

/** findIntakeStart's statement, built from its values. */
export function intakeStartStatement(db: Executor, v: StartValues, internalReason: boolean) {
  const setting = db
    .selectFrom('external_system as es')
    .innerJoin('tenant as t', 't.id', 'es.tenant_id')
    .innerJoin('reason as r', (j) => j.onRef('r.tenant_id', '=', 't.id').on('r.code', '=', intakeReasonCode(v.externalSystemId, v.tenantId, v.partnerReasonCode, internalReason)))
    .select([
      'es.code as s_partner_code',
      't.name as s_tenant_name',
      't.ibge_code as s_tenant_ibge_code',
      't.intake_policy as s_tenant_intake_policy',
      'r.tenant_id as s_r_tenant_id',
      'r.code as s_r_code',
      'r.name_pt as s_r_name_pt',
      'r.name_en as s_r_name_en',
      'r.priority as s_r_priority',
      'r.sla_hours as s_r_sla_hours',
      'r.created_at as s_r_created_at',
      'r.updated_at as s_r_updated_at',
    ])
    .where('es.id', '=', v.externalSystemId)
    .where('t.id', '=', v.tenantId);
  const reads = stateQuery(db, v.externalSystemId, v.key, v.protocolNumber)
    .leftJoin(setting.as('s'), (j) => j.onTrue())
    .selectAll('s');
  return sql<StartRow>`WITH st AS MATERIALIZED (${reads}),
     taken AS MATERIALIZED (
       SELECT n.name, lumen_take_number(${v.tenantId}::uuid, n.name, n.year) AS value, set_config('synchronous_commit', 'off', true) AS commit_mode
         FROM st, (VALUES (1, 'alert', 0), (2, 'service_order', ${v.year}::integer)) AS n(ord, name, year)
        WHERE st.id IS NULL AND st.key_request_hash IS NULL AND st.s_partner_code IS NOT NULL
          AND (n.ord = 1 OR (${v.canCreateOrders}::boolean AND st.s_tenant_intake_policy = 'automatic'))
        ORDER BY n.ord)
SELECT st.*,
       (SELECT value FROM taken WHERE name = 'alert') AS n_alert,
       (SELECT value FROM taken WHERE name = 'service_order') AS n_order,
       (SELECT bool_and(commit_mode = 'off') FROM taken) AS n_async
  FROM st`;
}

type StartRow = StateRow & SettingColumns & { n_alert: number | null; n_order: number | null; n_async: boolean | null };
type SettingColumns = {
  s_partner_code: string | null;
  s_tenant_name: string | null;
  s_tenant_ibge_code: string | null;
  s_tenant_intake_policy: TenantRow['intake_policy'] | null;
  s_r_tenant_id: string | null;
  s_r_code: string | null;
  s_r_name_pt: string | null;
  s_r_name_en: string | null;
  s_r_priority: ReasonRow['priority'] | null;
  s_r_sla_hours: number | null;
  s_r_created_at: Date | null;
  s_r_updated_at: Date | null;
};

/** findIntakeStart's statement, compiled once per shape (compiled-shapes.ts). */
const START = new ShapeCache<StartValues>((db, v) => intakeStartStatement(db, v, false), 1);
const START_INTERNAL = new ShapeCache<StartValues>((db, v) => intakeStartStatement(db, v, true), 1);

export function compiledIntakeStart(db: Executor, values: StartValues, internalReason: boolean): CompiledQuery<StartRow> {
  return (internalReason ? START_INTERNAL : START).compile<StartRow>(db, values);
}

function stateQuery(db: Executor, externalSystemId: string, key: string | null, protocolNumber: string) {
  return db
    .selectFrom(sql<{ one: number }>`(VALUES (1))`.as('one'))
    .leftJoin('idempotency_key as k', (j) => j.on('k.external_system_id', '=', externalSystemId).on('k.key', '=', key))
    .leftJoin('alert as a', (j) => j.on('a.external_system_id', '=', externalSystemId).on('a.protocol_number', '=', protocolNumber))
    .selectAll('a')
    .select([sql<string>`a.xmin::text`.as('row_version'), 'k.request_hash as key_request_hash', 'k.response_body as key_response_body']);
}

type StateRow = Awaited<ReturnType<ReturnType<typeof stateQuery>['executeTakeFirstOrThrow']>>;

function stateOf(row: StateRow): IntakeState {
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
  /**
   * The order's pole is the nearest active pole within `meters` of this point, found by
   * the write itself (the order's pole_id is then ignored); null keeps order.pole_id.
   */
  nearPole: ({ latitude: number; longitude: number; meters: number } & Partial<Box>) | null;
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
    const near = n.nearPole;
    const box = near && near.south !== undefined ? { south: near.south, north: near.north!, west: near.west!, east: near.east! } : undefined;
    const poleId = near ? nearestPoleIdExpression(db, n.order.tenant_id, near.latitude, near.longitude, near.meters, box) : n.order.pole_id;
    ctes.push(sql`new_order AS (${db.insertInto('service_order').values({ ...n.order, pole_id: poleId, status: 'OPEN', sla_due_at: slaDue })})`);
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

/** newIntakeStatement compiled once per shape (which parts and columns the request has). */
const NEW_INTAKE = new ShapeCache<NewIntake>((db, n) => newIntakeStatement(db, n), 2);

export async function insertNewIntake(db: Executor, n: NewIntake): Promise<string> {
  const { rows } = await db.executeQuery(compiledNewIntake(db, n));
  return rows[0]!.response;
}

/**
 * `n` as newIntakeStatement takes it: what the statement would otherwise compute from
 * the values comes in as values (the box around the point), and a search radius of 0 or
 * less means "no pole".
 */
export function shapeNewIntake(n: NewIntake): NewIntake {
  const near = n.nearPole;
  if (!near || !n.order) return n;
  return near.meters > 0
    ? { ...n, nearPole: { latitude: near.latitude, longitude: near.longitude, meters: near.meters, ...boxAround(near.latitude, near.longitude, near.meters) } }
    : { ...n, order: { ...n.order, pole_id: null }, nearPole: null };
}

/** newIntakeStatement's text and parameters for `n`, from the shape's compiled text. */
export function compiledNewIntake(db: Executor, n: NewIntake): CompiledQuery<{ response: string }> {
  return NEW_INTAKE.compile<{ response: string }>(db, shapeNewIntake(n));
}
