import type { Executor } from '../../database.js';

/** Where a display reference points: the row's id and tenant. */
export interface RowRef {
  id: string;
  tenant_id: string;
}

/** `null` tenants: every tenant (a platform-wide caller); otherwise only these. */
export type TenantSet = readonly string[] | null;

export async function alertRefById(db: Executor, id: string): Promise<RowRef | undefined> {
  return db.selectFrom('alert').select(['id', 'tenant_id']).where('id', '=', id).executeTakeFirst();
}

/** Alerts with this number in the given tenants (at most one per tenant: UNIQUE (tenant_id, alert_number)). */
export async function alertRefsByNumber(db: Executor, alertNumber: number, tenants: TenantSet): Promise<RowRef[]> {
  if (tenants !== null && tenants.length === 0) return [];
  let q = db.selectFrom('alert').select(['id', 'tenant_id']).where('alert_number', '=', alertNumber);
  if (tenants !== null) q = q.where('tenant_id', 'in', tenants);
  return q.limit(2).execute();
}

export async function orderRefById(db: Executor, id: string): Promise<RowRef | undefined> {
  return db.selectFrom('service_order').select(['id', 'tenant_id']).where('id', '=', id).executeTakeFirst();
}

export async function orderRefsByNumber(db: Executor, number: string, tenants: TenantSet): Promise<RowRef[]> {
  if (tenants !== null && tenants.length === 0) return [];
  let q = db.selectFrom('service_order').select(['id', 'tenant_id']).where('number', '=', number);
  if (tenants !== null) q = q.where('tenant_id', 'in', tenants);
  return q.limit(2).execute();
}

export async function teamRefById(db: Executor, id: string): Promise<RowRef | undefined> {
  return db.selectFrom('team').select(['id', 'tenant_id']).where('id', '=', id).executeTakeFirst();
}

/** Teams named so, ignoring case and surrounding blanks (names are unique per tenant). */
export async function teamRefsByName(db: Executor, name: string, tenants: TenantSet): Promise<(RowRef & { name: string })[]> {
  if (tenants !== null && tenants.length === 0) return [];
  let q = db
    .selectFrom('team')
    .select(['id', 'tenant_id', 'name'])
    .where((eb) => eb(eb.fn('lower', ['name']), '=', name.toLowerCase()));
  if (tenants !== null) q = q.where('tenant_id', 'in', tenants);
  return q.limit(20).execute();
}
