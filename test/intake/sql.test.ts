import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { DB } from '../../src/db/schema.js';
import { allocationStatement } from '../../src/db/repositories/counter.repository.js';
import { newIntakeStatement, type NewIntake } from '../../src/db/repositories/intake/request.repository.js';

/**
 * The two statements that write a new alert, compiled, kept beside the tests for
 * review (bench/sql/intake-anchor.pgbench.sql runs the same writes). A change to
 * either shows up here.
 */
const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: new pg.Pool({ max: 1 }) }) });

function render(q: { compile(db: Kysely<DB>): { sql: string; parameters: readonly unknown[] } }): string {
  const c = q.compile(db);
  return `${c.sql.trim()}\n-- parameters: ${JSON.stringify(c.parameters)}\n`;
}

const automatic: NewIntake = {
  order: {
    id: 'O',
    tenant_id: 'T',
    number: 'OS-2026-00042',
    priority: 'Medium',
    reason_code: 'EXTERNAL_OTHER',
    address: 'Rua Augusta, 1500',
    neighborhood: 'Consolação',
    latitude: -23.5573,
    longitude: -46.6602,
    pole_id: null,
    team_id: null,
    closed_at: null,
  },
  alert: {
    id: 'A',
    tenant_id: 'T',
    external_system_id: 'E',
    protocol_number: '156-2026-000123456',
    alert_number: 1187,
    status: 'Linked',
    requested_at: new Date('2026-03-14T12:30:00.000Z'),
    requester_name: 'Maria',
    requester_phone: null,
    lamp_type: null,
    partner_reason_code: null,
    reason_code: 'EXTERNAL_OTHER',
    priority: 'Medium',
    address_street: 'Rua Augusta',
    address_number: '1500',
    address_neighborhood: 'Consolação',
    address_reference: null,
    latitude: -23.5573,
    longitude: -46.6602,
    location_source: 'payload',
    description: 'Lâmpada apagada',
    additional_notes: null,
    service_order_id: 'O',
    cancel_reason: null,
  },
  slaHours: 24,
  nearPole: { latitude: -23.5573, longitude: -46.6602, meters: 30 },
  actor: 'partner:p',
  orderNote: 'created at intake of 156-2026-000123456',
  idempotency: { external_system_id: 'E', key: 'K', request_hash: Buffer.from('00', 'hex') },
  response: { before: '{"createdAt":', after: '}' },
};

describe('compiled SQL of a new alert', () => {
  it('numbers: both counters in one upsert, committed asynchronously', async () => {
    await expect(render(allocationStatement('T', { alert: true, serviceOrder: true }, 2026))).toMatchFileSnapshot('./__snapshots__/number-allocation.sql');
  });
  it('the write: order, alert, their status histories and the Idempotency-Key record in one statement', async () => {
    await expect(render(newIntakeStatement(db, automatic))).toMatchFileSnapshot('./__snapshots__/new-intake.sql');
  });
  it('the write without an order (manual triage) and without a key', async () => {
    const manual: NewIntake = { ...automatic, order: null, nearPole: null, alert: { ...automatic.alert, status: 'Pending', service_order_id: null }, idempotency: null };
    await expect(render(newIntakeStatement(db, manual))).toMatchFileSnapshot('./__snapshots__/new-intake-manual.sql');
  });
});
