import type { OrderCompletion } from '../../../generated/admin/types.gen.js';
import { AppError, type FieldError } from '../../lib/errors.js';
import type { Executor, Tx } from '../../db/database.js';
import { requireTenantRole, type AdminAccess } from '../operators/index.js';
import { materialView } from './materials.js';
import { photoView, type OrderRef } from './photos.js';

/** What a crew records with a completion, besides the note. */
export interface CompletionInput {
  completionId?: string;
  materials?: { materialId: string; quantity: number }[];
  photoIds?: string[];
}

/**
 * Under the order's lock: true when this completion id already completed this order (a
 * retry of the same completion: answer it and change nothing). The id of a completion
 * of another order is refused (a client reusing ids is broken, not retrying).
 */
export async function alreadyCompleted(tx: Tx, orderId: string, completionId: string | undefined): Promise<boolean> {
  if (!completionId) return false;
  const row = await tx.selectFrom('service_order_completion').select(['service_order_id']).where('completion_id', '=', completionId).executeTakeFirst();
  if (!row) return false;
  if (row.service_order_id !== orderId) throw new AppError('idempotency-key-reused', {}, [{ pointer: '/completionId', message: 'this completion id was already used for another order' }]);
  return true;
}

/**
 * Checks the materials (active items of the order's city; each once) and the photos
 * (uploaded for this order), every problem reported at once, then records the
 * completion. Runs in the completing transaction: a refusal leaves nothing behind.
 */
export async function recordCompletion(tx: Tx, order: { id: string; tenant_id: string }, input: CompletionInput, note: string | null, who: string): Promise<void> {
  const materials = input.materials ?? [];
  const photoIds = input.photoIds ?? [];
  const errors: FieldError[] = [];
  const ids = materials.map((m) => m.materialId);
  const known = ids.length
    ? new Set((await tx.selectFrom('completion_material').select('id').where('tenant_id', '=', order.tenant_id).where('active', '=', true).where('id', 'in', ids).execute()).map((r) => r.id))
    : new Set<string>();
  const seen = new Set<string>();
  materials.forEach((m, i) => {
    if (!known.has(m.materialId)) errors.push({ pointer: `/materials/${i}/materialId`, message: "is not an active material of the order's city" });
    else if (seen.has(m.materialId)) errors.push({ pointer: `/materials/${i}/materialId`, message: 'is named twice (give the total quantity once)' });
    seen.add(m.materialId);
  });
  const uploaded = photoIds.length
    ? new Set((await tx.selectFrom('service_order_photo').select('id').where('service_order_id', '=', order.id).where('id', 'in', photoIds).execute()).map((r) => r.id))
    : new Set<string>();
  photoIds.forEach((id, i) => {
    if (!uploaded.has(id)) errors.push({ pointer: `/photoIds/${i}`, message: 'is not a photo uploaded for this order' });
  });
  if (errors.length) throw new AppError('validation-failed', { count: errors.length }, errors);

  await tx
    .insertInto('service_order_completion')
    .values({ service_order_id: order.id, tenant_id: order.tenant_id, completion_id: input.completionId ?? crypto.randomUUID(), note, completed_by: who })
    .execute();
  if (materials.length) {
    await tx.insertInto('service_order_completion_material').values(materials.map((m) => ({ service_order_id: order.id, material_id: m.materialId, quantity: m.quantity }))).execute();
  }
}

/** The completion of an order (null before) and its photos, for any role on its tenant. */
export async function orderCompletion(db: Executor, access: AdminAccess, order: OrderRef): Promise<OrderCompletion> {
  requireTenantRole(access, order.tenantId, 'viewer', `service order ${order.id}`);
  const row = await db.selectFrom('service_order_completion').selectAll().where('service_order_id', '=', order.id).executeTakeFirst();
  const photos = await db.selectFrom('service_order_photo').selectAll().where('service_order_id', '=', order.id).orderBy('uploaded_at').orderBy('id').execute();
  let completion: OrderCompletion['completion'] = null;
  if (row) {
    const used = await db
      .selectFrom('service_order_completion_material as u')
      .innerJoin('completion_material as m', 'm.id', 'u.material_id')
      .selectAll('m')
      .select('u.quantity')
      .where('u.service_order_id', '=', order.id)
      .orderBy('m.kind')
      .orderBy('m.name')
      .execute();
    completion = {
      completionId: row.completion_id,
      note: row.note,
      completedBy: row.completed_by,
      completedAt: row.completed_at.toISOString(),
      materials: used.map(({ quantity, ...m }) => ({ material: materialView(m), quantity })),
    };
  }
  return { completion, photos: photos.map(photoView) };
}
