import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { ShapeCache } from '../../src/db/compiled-shapes.js';
import type { DB } from '../../src/db/schema.js';
import { compiledIntakeStart, compiledNewIntake, intakeStartStatement, newIntakeStatement, shapeNewIntake, type NewIntake, type StartValues } from '../../src/db/repositories/intake/request.repository.js';

/**
 * A statement compiled once per shape must send, for every call, exactly the text and
 * the parameters that building and compiling it for that call's values gives.
 */
const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: new pg.Pool({ max: 1 }) }) });

const order = (id: string): NonNullable<NewIntake['order']> => ({
  id,
  tenant_id: 'tenant-of-' + id,
  number: `OS-2026-${id}`,
  priority: 'High',
  reason_code: 'LAMP_OUT',
  address: 'Avenida Presidente Juscelino Kubitschek de Oliveira, 12345, bloco B',
  neighborhood: 'Jardim Botânico',
  latitude: -3.1019,
  longitude: -60.025,
  pole_id: null,
  team_id: null,
  closed_at: null,
});

const alert = (id: string, extra: Partial<NewIntake['alert']> = {}): NewIntake['alert'] => ({
  id,
  tenant_id: 'tenant-of-' + id,
  external_system_id: 'partner-' + id,
  protocol_number: `156-2026-${id}`,
  alert_number: id.length * 1000 + 7,
  status: 'Linked',
  requested_at: new Date(`2026-11-${10 + id.length}T08:15:00.000Z`),
  requester_name: `Maria Aparecida dos Santos Oliveira ${id}`,
  requester_phone: '+5592981234567',
  lamp_type: 'LED',
  partner_reason_code: 'LAMP-OUT',
  reason_code: 'LAMP_OUT',
  priority: 'High',
  address_street: 'Avenida Djalma Batista',
  address_number: String(id.length),
  address_neighborhood: 'Chapada',
  address_reference: null,
  latitude: -3.1019,
  longitude: -60.025,
  location_source: 'payload',
  description: `Três lâmpadas apagadas ${id}`,
  additional_notes: null,
  service_order_id: id,
  cancel_reason: null,
  ...extra,
});

function intake(id: string, parts: { order?: boolean; near?: number | null; key?: boolean; alert?: Partial<NewIntake['alert']> }): NewIntake {
  const near = parts.near ?? null;
  return {
    order: parts.order === false ? null : order(id),
    alert: alert(id, parts.alert),
    slaHours: id.length * 3,
    nearPole: near === null ? null : { latitude: -3.1019 + id.length / 1000, longitude: -60.025, meters: near },
    actor: `partner:${id}`,
    orderNote: `created at intake of 156-2026-${id}`,
    idempotency: parts.key === false ? null : { external_system_id: 'partner-' + id, key: `key-${id}`, request_hash: Buffer.from(id) },
    response: { before: `{"id":"${id}","createdAt":`, after: '}' },
  };
}

/** The request as compiledNewIntake sends it, built and compiled for this call alone. */
function builtNewIntake(n: NewIntake) {
  return newIntakeStatement(db, shapeNewIntake(n)).compile(db);
}

describe('statements compiled once per shape', () => {
  it('a new intake: the same text and parameters as compiling it for each call, across shapes and calls', () => {
    const cases: NewIntake[] = [];
    for (const id of ['a1', 'bb22', 'ccc333']) {
      cases.push(intake(id, { near: 30 }));
      cases.push(intake(id, { near: 0 }));
      cases.push(intake(id, { near: null }));
      cases.push(intake(id, { order: false, key: false, alert: { status: 'Pending', service_order_id: null } }));
      cases.push(intake(id, { near: 50, alert: { requester_phone: undefined, lamp_type: undefined } }));
      cases.push(intake(id, { near: 50, alert: { address_reference: `Em frente à escola ${id}`, additional_notes: 'Poste inclinado' } }));
    }
    const texts = new Set<string>();
    for (const n of cases) {
      const cached = compiledNewIntake(db, n);
      const built = builtNewIntake(n);
      expect(cached.sql).toBe(built.sql);
      expect(cached.parameters).toEqual(built.parameters);
      texts.add(cached.sql);
    }
    // One text per shape: the pole search; no search (no point, or a radius of 0: the
    // order's pole is null either way); no order and no key; two columns left out.
    expect(texts.size).toBe(4);
  });

  it("an intake's first statement: the same text and parameters as compiling it for each call", () => {
    const values = (i: number, key: string | null, code: string | null): StartValues => ({
      externalSystemId: `partner-${i}`,
      tenantId: `tenant-${i}`,
      partnerReasonCode: code,
      key,
      protocolNumber: `156-2026-${i}`,
      year: 2025 + i,
      canCreateOrders: i % 2 === 0,
    });
    for (const internal of [false, true]) {
      for (let i = 0; i < 4; i++) {
        for (const v of [values(i, `key-${i}`, 'LAMP-OUT'), values(i, null, null), values(i, `key-${i}`, null)]) {
          const cached = compiledIntakeStart(db, v, internal);
          const built = intakeStartStatement(db, v, internal).compile(db);
          expect(cached.sql).toBe(built.sql);
          expect(cached.parameters).toEqual(built.parameters);
        }
      }
    }
  });

  it('keeps one text per shape, and refuses a builder that computes with a value', () => {
    const cache = new ShapeCache<{ a: number; b: string | null }>((d, v) => sql`SELECT ${v.a}::int, ${v.b}::text, ${'constant'}::text`, 1);
    const first = cache.compile(db, { a: 1, b: 'x' });
    const second = cache.compile(db, { a: 2, b: 'y' });
    expect(second.sql).toBe(first.sql);
    expect(second.parameters).toEqual([2, 'y', 'constant']);
    expect(cache.compile(db, { a: 3, b: null }).parameters).toEqual([3, null, 'constant']);
    expect(cache.size).toBe(2);

    const doubles = new ShapeCache<{ a: number }>((d, v) => sql`SELECT ${v.a * 2}`, 1);
    expect(() => doubles.compile(db, { a: 1 })).toThrow(/computed from a value/);
    const labels = new ShapeCache<{ a: string }>((d, v) => sql`SELECT ${`label ${v.a}`}`, 1);
    expect(() => labels.compile(db, { a: 'x' })).toThrow(/computed from a value/);
  });
});
