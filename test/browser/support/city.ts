/**
 * A city to work in, made the way an operator's administrator would: the CLI for the
 * tenant, team, partner and admin token; the partner API for the citizens' requests.
 */
import { randomUUID } from 'node:crypto';
import zlib from 'node:zlib';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { secretFile } from '../../support/app.js';
import type { Lumen } from './lumen.js';

export interface Person {
  email: string;
  password: string;
}

export interface City {
  /** The city's administrator (role city-admin), signed in through the sign-in page. */
  admin: Person;
  tenantId: string;
  tenantName: string;
  teamId: string;
  partnerCode: string;
  apiKey: string;
  /** A platform-wide admin token, for the test's own reads and set-up through the admin API. */
  token: string;
}

/** An operator through the CLI, with the one-time password Lumen made. */
export async function makeOperator(lumen: Lumen, o: { email: string; name: string; role: string; tenantId?: string }): Promise<Person> {
  const made = await lumen.cli('operator', 'create', '--email', o.email, '--name', o.name, '--role', o.role, ...(o.tenantId ? ['--tenant', o.tenantId] : []));
  return { email: o.email, password: made.initialPassword as string };
}

export async function makeCity(lumen: Lumen, o: { name: string; webhookUrl: string; code: string }): Promise<City> {
  const tenant = await lumen.cli('tenant', 'create', '--name', o.name, '--intake', 'manual');
  const team = await lumen.cli('team', 'create', '--tenant', tenant.id, '--name', `Equipe ${o.name} 01`);
  const partner = await lumen.cli(
    'partner',
    'create',
    '--tenant',
    tenant.id,
    '--code',
    o.code,
    '--scopes',
    'canCreateAlerts,canReadCityData',
    '--webhook-url',
    o.webhookUrl,
    '--webhook-secret-file',
    secretFile('segredo-de-teste-0123456789'),
  );
  const token = await lumen.cli('admin-token', 'create', '--name', `desk-${o.code.toLowerCase()}`);
  const admin = await makeOperator(lumen, { email: `admin@${o.code.toLowerCase()}.example`, name: `Admin ${o.name}`, role: 'city-admin', tenantId: tenant.id });
  return { admin, tenantId: tenant.id, tenantName: o.name, teamId: team.id, partnerCode: o.code, apiKey: partner.apiKey, token: token.token };
}

export interface Request {
  description?: string;
  street?: string;
  reference?: string;
  requesterName?: string;
  reasonCode?: string;
  latitude?: number;
  longitude?: number;
  noLocation?: boolean;
  /** Photos sent inline (contentBase64), PNG. */
  photos?: { filename: string; png: Buffer }[];
}

/** A real PNG of a lit street lamp's colours (a gradient), `size` pixels square. */
export function lampPng(size = 96): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf: Buffer) => {
    let c = 0xffffffff;
    for (const b of buf) c = crcTable[(c ^ b) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const sum = Buffer.alloc(4);
    sum.writeUInt32BE(crc(body));
    return Buffer.concat([len, body, sum]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit RGB
  const rows: Buffer[] = [];
  for (let y = 0; y < size; y++) {
    const row = Buffer.alloc(1 + size * 3);
    for (let x = 0; x < size; x++) row.set([20 + (x * 200) / size, 33 + (y * 150) / size, 61], 1 + x * 3);
    rows.push(row);
  }
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', zlib.deflateSync(Buffer.concat(rows))), chunk('IEND', Buffer.alloc(0))]);
}

/** One citizen's request through the partner API; the Alert id (read back with the admin API). */
export async function sendRequest(lumen: Lumen, city: City, r: Request = {}): Promise<{ protocolNumber: string; status: number; body: any }> {
  const protocolNumber = `156-${randomUUID().slice(0, 8)}`;
  const address: Record<string, unknown> = { street: r.street ?? 'Rua Augusta', number: '1500', neighborhood: 'Consolação', reference: r.reference ?? 'Em frente à padaria' };
  if (!r.noLocation) Object.assign(address, { latitude: r.latitude ?? -23.5573, longitude: r.longitude ?? -46.6602 });
  const body = {
    protocolNumber,
    assetType: 'POLE',
    requestedAt: new Date(Date.now() - 3_600_000).toISOString(),
    requester: { name: r.requesterName ?? 'Maria Aparecida dos Santos', phone: '+5511987654321' },
    lampType: 'LED',
    ...(r.reasonCode ? { reasonCode: r.reasonCode } : {}),
    address,
    problem: { description: r.description ?? 'Lâmpada do poste apagada há três noites.', additionalNotes: 'A rua fica escura depois das 19h.' },
    ...(r.photos ? { attachments: r.photos.map((p) => ({ type: 'photo', filename: p.filename, contentType: 'image/png', contentBase64: p.png.toString('base64') })) } : {}),
  };
  const res = await fetch(`${lumen.baseUrl}/api/external/service-orders`, { method: 'POST', headers: { 'x-api-key': city.apiKey, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { protocolNumber, status: res.status, body: await res.json() };
}

/** The alerts of a city, newest last, through the admin API. */
export async function alertsOf(lumen: Lumen, city: City, status = 'Pending'): Promise<any[]> {
  const res = await lumen.admin(city.token, 'GET', `/api/admin/alerts?tenantId=${city.tenantId}&status=${status}&pageSize=500`);
  return res.body.items as any[];
}

/** Poles around Rua Augusta, 1500 (a few metres apart), through `lumen pole import`. */
export async function importPoles(lumen: Lumen, city: City): Promise<void> {
  const rows = ['code,address,neighborhood,latitude,longitude,active,device_identifier'];
  for (let i = 0; i < 6; i++) rows.push(`AUG-${1500 + i * 10},Rua Augusta ${1500 + i * 10},Consolação,${(-23.5573 + i * 0.00012).toFixed(6)},${(-46.6602 + i * 0.0001).toFixed(6)},true,`);
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'lumen-poles-')), 'poles.csv');
  writeFileSync(file, rows.join('\n') + '\n');
  await lumen.cli('pole', 'import', '--tenant', city.tenantId, file);
}
