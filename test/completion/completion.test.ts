import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeAlert, makePartner, makeTeam, makeTenant } from '../support/factories.js';
import { lampPng } from '../browser/support/city.js';
import { adminFetch, adminToken, cliJson, orderRow, outboxOf, problemOf } from '../operations/support.js';

let t: TestApp;
let platform: ReturnType<typeof adminFetch>;
let crew: ReturnType<typeof adminFetch>;
let curitiba: string;
let manaus: string;
let partner: string;
let team: { id: string };
let manausTeam: { id: string };

beforeAll(async () => {
  t = await startTestApp();
  platform = adminFetch(t, await adminToken(t, 'platform-desk'));
  curitiba = (await makeTenant(t.rt, { name: 'Curitiba' })).id;
  manaus = (await makeTenant(t.rt, { name: 'Manaus' })).id;
  partner = (await makePartner(t.rt, { tenantId: curitiba })).id;
  team = await makeTeam(t.rt, { tenantId: curitiba, name: 'Equipe Boqueirão 02' });
  manausTeam = await makeTeam(t.rt, { tenantId: manaus, name: 'Equipe Adrianópolis 01' });
  // The crew's own token: triager on Curitiba only.
  const made = cliJson(await t.cli('admin-token', 'create', '--name', 'equipe-boqueirao', '--tenant', curitiba, '--role', 'triager', '--json'));
  crew = adminFetch(t, made.token as string);
});
afterAll(async () => {
  await t?.stop();
});

async function assignedOrder(tenantId = curitiba, teamId = team.id): Promise<{ orderId: string; alertId: string }> {
  const alert = await makeAlert(t.rt, { tenantId, externalSystemId: tenantId === curitiba ? partner : (await makePartner(t.rt, { tenantId })).id, status: 'Linked' });
  expect((await platform(`/service-orders/${alert.serviceOrderId}/assign`, { json: { teamId } })).status).toBe(200);
  return { orderId: alert.serviceOrderId!, alertId: alert.id };
}

async function material(tenantId: string, body: Record<string, unknown>): Promise<string> {
  const res = await platform(`/tenants/${tenantId}/materials`, { json: body });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

const put = (api: typeof crew, orderId: string, photoId: string, bytes: Buffer, contentType = 'image/png') =>
  api(`/service-orders/${orderId}/photos/${photoId}`, { method: 'PUT', json: { contentType, data: bytes.toString('base64') } });

describe("the city's list of materials", () => {
  it('is created, listed, renamed and retired by the city; names are unique within the city, case aside', async () => {
    const lamp = await material(curitiba, { kind: 'lamp', name: 'Lâmpada LED 100 W', wattage: 100 });
    await material(curitiba, { kind: 'photocell', name: 'Relé fotoelétrico NA' });
    const dup = await platform(`/tenants/${curitiba}/materials`, { json: { kind: 'lamp', name: 'lâmpada led 100 w' } });
    expect(dup.status).toBe(422);
    expect((await problemOf(dup)).errors).toEqual([{ pointer: '/name', message: expect.stringContaining('already') }]);
    // Another city may use the same name.
    await material(manaus, { kind: 'lamp', name: 'Lâmpada LED 100 W', wattage: 100 });

    const list = (await (await crew(`/tenants/${curitiba}/materials`)).json()) as { items: { id: string; name: string; kind: string }[] };
    expect(list.items.map((m) => m.name)).toEqual(['Lâmpada LED 100 W', 'Relé fotoelétrico NA']);

    // A triager cannot change the list.
    expect((await crew(`/tenants/${curitiba}/materials/${lamp}`, { method: 'PATCH', json: { active: false } })).status).toBe(403);
    const retired = await platform(`/tenants/${curitiba}/materials/${lamp}`, { method: 'PATCH', json: { active: false } });
    expect(await retired.json()).toMatchObject({ id: lamp, active: false });
    expect(((await (await crew(`/tenants/${curitiba}/materials`)).json()) as { items: unknown[] }).items).toHaveLength(1);
    expect(((await (await crew(`/tenants/${curitiba}/materials?includeRetired=true`)).json()) as { items: unknown[] }).items).toHaveLength(2);
    expect((await platform(`/tenants/${curitiba}/materials/${lamp}`, { method: 'PATCH', json: { active: true } })).status).toBe(200);
  });

  it("another city's list and materials do not exist for the crew", async () => {
    expect((await crew(`/tenants/${manaus}/materials`)).status).toBe(404);
    const manausLamp = await material(manaus, { kind: 'lamp', name: 'Lâmpada vapor de sódio 150 W', wattage: 150 });
    // A city that does not exist, even for a platform admin.
    const nowhere = randomUUID();
    expect((await platform(`/tenants/${nowhere}/materials`)).status).toBe(404);
    expect((await platform(`/tenants/${nowhere}/materials`, { json: { kind: 'lamp', name: 'Lâmpada LED 50 W' } })).status).toBe(404);
    // Through Curitiba's path, Manaus's material is unknown even to a platform admin.
    expect((await platform(`/tenants/${curitiba}/materials/${manausLamp}`, { method: 'PATCH', json: { active: false } })).status).toBe(404);
  });
});

describe('after-repair photos', () => {
  it('are stored checked and served with the headers that keep a browser from running them', async () => {
    const { orderId, alertId } = await assignedOrder();
    const png = lampPng(48);
    const photoId = randomUUID();
    const up = await put(crew, orderId, photoId, png);
    expect(up.status).toBe(200);
    expect(await up.json()).toMatchObject({ id: photoId, contentType: 'image/png', sizeBytes: png.length, uploadedBy: 'admin-token:equipe-boqueirao' });

    const got = await crew(`/service-orders/${orderId}/photos/${photoId}`);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('image/png');
    expect(got.headers.get('x-content-type-options')).toBe('nosniff');
    expect(got.headers.get('content-security-policy')).toContain('sandbox');
    expect(got.headers.get('content-disposition')).toMatch(/^inline; filename="photo-[0-9a-f]{12}\.png"$/);
    expect(Buffer.from(await got.arrayBuffer()).equals(png)).toBe(true);

    // The same upload again is the same photo; other bytes under that id are refused.
    expect((await put(crew, orderId, photoId, png)).status).toBe(200);
    const other = await put(crew, orderId, photoId, lampPng(40));
    expect(other.status).toBe(422);
    expect((await t.rt.db.selectFrom('service_order_photo').select('id').where('service_order_id', '=', orderId).execute()).length).toBe(1);

    // Bytes that are not the declared image are refused, and nothing is stored.
    const html = Buffer.from('<html><script>alert(1)</script></html>');
    const fake = await put(crew, orderId, randomUUID(), html);
    expect(fake.status).toBe(422);
    expect((await problemOf(fake)).errors?.[0]?.pointer).toBe('/data');
    const jpegClaim = await put(crew, orderId, randomUUID(), png, 'image/jpeg');
    expect(jpegClaim.status).toBe(422);
    expect((await t.rt.db.selectFrom('service_order_photo').select('id').where('service_order_id', '=', orderId).execute()).length).toBe(1);

    // Listed on the order's completion (which its alerts' pages read too).
    const view = (await (await crew(`/service-orders/${orderId}/completion`)).json()) as { completion: unknown; photos: { id: string }[] };
    expect(view).toMatchObject({ completion: null, photos: [{ id: photoId }] });
    expect(alertId).toBeTruthy();
  });

  it("another city's order and its photos answer 404, as if they did not exist", async () => {
    const { orderId } = await assignedOrder(manaus, manausTeam.id);
    const photoId = randomUUID();
    expect((await put(platform, orderId, photoId, lampPng(32))).status).toBe(200);
    expect((await crew(`/service-orders/${orderId}/photos/${photoId}`)).status).toBe(404);
    expect((await put(crew, orderId, randomUUID(), lampPng(32))).status).toBe(404);
    expect((await crew(`/service-orders/${orderId}/completion`)).status).toBe(404);
    expect((await crew(`/service-orders/${orderId}/complete`, { json: { completionId: randomUUID() } })).status).toBe(404);
    // A photo of one order is not found through another order of the same city.
    const { orderId: mine } = await assignedOrder();
    expect((await platform(`/service-orders/${mine}/photos/${photoId}`)).status).toBe(404);
  });
});

describe('completing with materials and photos', () => {
  it('records materials and photos; partners get only the note; a retry with the same completion id completes once', async () => {
    const lamp = await material(curitiba, { kind: 'lamp', name: 'Lâmpada LED 150 W', wattage: 150 });
    const driver = await material(curitiba, { kind: 'driver', name: 'Driver 150 W', wattage: 150 });
    const { orderId, alertId } = await assignedOrder();
    const photoId = randomUUID();
    expect((await put(crew, orderId, photoId, lampPng(64))).status).toBe(200);
    const completionId = randomUUID();
    const body = { note: 'Lâmpada e driver trocados; poste aceso.', completionId, materials: [{ materialId: lamp, quantity: 1 }, { materialId: driver, quantity: 2 }], photoIds: [photoId] };

    const first = await crew(`/service-orders/${orderId}/complete`, { json: body });
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ status: 'COMPLETED' });
    const closedAt = (await orderRow(t, orderId)).closed_at;

    // The same completion sent again (an offline queue's retry): the order as it is, nothing new.
    const again = await crew(`/service-orders/${orderId}/complete`, { json: body });
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ status: 'COMPLETED' });
    expect((await orderRow(t, orderId)).closed_at).toEqual(closedAt);
    const events = (await outboxOf(t, alertId)).filter((e) => e.type === 'ServiceOrder.Completed');
    expect(events).toHaveLength(1);
    const history = await t.rt.db.selectFrom('service_order_status_history').select('to_status').where('service_order_id', '=', orderId).where('to_status', '=', 'COMPLETED').execute();
    expect(history).toHaveLength(1);

    // Another completion of the completed order is a conflict, as before.
    expect((await crew(`/service-orders/${orderId}/complete`, { json: { ...body, completionId: randomUUID() } })).status).toBe(409);

    // The partner's event carries the note and nothing of the materials or photos.
    const payload = JSON.stringify(events[0]!.payload);
    expect(payload).toContain('Lâmpada e driver trocados; poste aceso.');
    expect(payload).not.toContain(photoId);
    expect(payload).not.toContain(lamp);
    expect(payload).not.toContain('Driver 150 W');
    expect(payload).not.toMatch(/photo|material/i);

    const view = (await (await crew(`/service-orders/${orderId}/completion`)).json()) as any;
    expect(view.completion).toMatchObject({ completionId, note: 'Lâmpada e driver trocados; poste aceso.', completedBy: 'admin-token:equipe-boqueirao' });
    expect(view.completion.materials.map((m: any) => [m.material.name, m.quantity])).toEqual([
      ['Driver 150 W', 2],
      ['Lâmpada LED 150 W', 1],
    ]);
    expect(view.photos.map((p: any) => p.id)).toEqual([photoId]);
  });

  it("refuses a material of another city, a retired one or a photo of another order, and changes nothing", async () => {
    const manausLamp = await material(manaus, { kind: 'lamp', name: 'Lâmpada LED 60 W', wattage: 60 });
    const retired = await material(curitiba, { kind: 'reactor', name: 'Reator 250 W vapor de sódio', wattage: 250 });
    expect((await platform(`/tenants/${curitiba}/materials/${retired}`, { method: 'PATCH', json: { active: false } })).status).toBe(200);
    const { orderId } = await assignedOrder();
    const { orderId: otherOrder } = await assignedOrder();
    const strayPhoto = randomUUID();
    expect((await put(crew, otherOrder, strayPhoto, lampPng(30))).status).toBe(200);

    const res = await crew(`/service-orders/${orderId}/complete`, {
      json: { completionId: randomUUID(), materials: [{ materialId: manausLamp, quantity: 1 }, { materialId: retired, quantity: 1 }], photoIds: [strayPhoto] },
    });
    expect(res.status).toBe(422);
    expect((await problemOf(res)).errors?.map((e) => e.pointer)).toEqual(['/materials/0/materialId', '/materials/1/materialId', '/photoIds/0']);
    expect((await orderRow(t, orderId)).status).toBe('ASSIGNED');
    expect(await t.rt.db.selectFrom('service_order_completion').select('completion_id').where('service_order_id', '=', orderId).executeTakeFirst()).toBeUndefined();

    // A completion id already used on another order is refused rather than taken as a retry.
    const used = randomUUID();
    expect((await crew(`/service-orders/${otherOrder}/complete`, { json: { completionId: used } })).status).toBe(200);
    const reused = await crew(`/service-orders/${orderId}/complete`, { json: { completionId: used } });
    expect(reused.status).toBe(422);
    expect((await orderRow(t, orderId)).status).toBe('ASSIGNED');
  });

  it('two identical completions at once complete the order once', async () => {
    const { orderId, alertId } = await assignedOrder();
    const body = { completionId: randomUUID(), note: 'Relé trocado' };
    const [a, b] = await Promise.all([crew(`/service-orders/${orderId}/complete`, { json: body }), crew(`/service-orders/${orderId}/complete`, { json: body })]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect((await outboxOf(t, alertId)).filter((e) => e.type === 'ServiceOrder.Completed')).toHaveLength(1);
  });
});
