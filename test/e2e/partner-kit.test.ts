/**
 * The partner kit as a partner uses it: dist/partner-kit (built by `npm run build`)
 * against dist/lumen on a fresh database. Lumen is set up with its own CLI (a demo city
 * and its partner); everything the partner does goes through the kit alone.
 */
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type * as Kit from '../../src/partner-kit/index.js';
import { lumenJson, startLumen, withDatabase, type Child } from './conformance-support.js';

const ADMIN_URL = withDatabase(process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres', 'postgres');
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

const database = `lumen_e2e_kit_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: ADMIN_URL });
const cwd = mkdtempSync(path.join(tmpdir(), 'lumen-e2e-kit-'));
const env = { DATABASE_URL: withDatabase(ADMIN_URL, database), LUMEN_DATA_DIR: path.join(cwd, 'data') };
let lumen: Child;
let kit: typeof Kit;

beforeAll(async () => {
  kit = (await import(pathToFileURL(path.resolve('dist/partner-kit/index.js')).href)) as typeof Kit;
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  lumen = await startLumen(cwd, env);
});

afterAll(async () => {
  await lumen?.stop();
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin.end();
  rmSync(cwd, { recursive: true, force: true });
});

describe('dist/partner-kit against dist/lumen', () => {
  it('is served by dist/lumen at /docs/partner-kit.tgz and installs with npm from that URL', async () => {
    const index = await (await fetch(`${lumen.base}/docs`)).text();
    expect(index).toContain('href="/docs/partner-kit.tgz"');
    const project = mkdtempSync(path.join(tmpdir(), 'lumen-kit-install-'));
    try {
      writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'partner-app', version: '1.0.0', private: true, type: 'module' }));
      // npm fetches the tarball from Lumen itself; the kit has no dependencies, so nothing else is asked of a registry.
      execFileSync('npm', ['install', '--no-audit', '--no-fund', `${lumen.base}/docs/partner-kit.tgz`], { cwd: project, stdio: 'pipe' });
      const installed = JSON.parse(readFileSync(path.join(project, 'node_modules/@lumen/partner-kit/package.json'), 'utf8')) as { version: string };
      expect(installed.version).toBe((JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version);
      const fromUrl = (await import(pathToFileURL(path.join(project, 'node_modules/@lumen/partner-kit/index.js')).href)) as typeof Kit;
      expect(typeof fromUrl.createLumenClient).toBe('function');
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  });

  it('runs a full sync, registers a request with a photo, and drains the events of its order', async () => {
    const demo = await lumenJson(['demo', 'seed', '--code', 'kit'], cwd, env);
    const client = kit.createLumenClient({ baseUrl: lumen.base, apiKey: String(demo.partner.apiKey) });

    const { body: health } = await client.call('getHealth');
    expect(health).toMatchObject({ externalSystemCode: 'kit' });

    const poles = new Set<string>();
    const round = await kit.syncByCursor(client, 'poles', { pageSize: 100, onItems: (items) => items.forEach((p) => poles.add(p.id)) });
    expect(poles.size).toBe(demo.city.poles);
    expect(round.updatedSince).toEqual(expect.any(String));
    const orders = await kit.syncByPages(client, 'serviceOrders', { pageSize: 2, onItems: () => {} });
    expect(orders.received).toBeGreaterThanOrEqual(demo.city.serviceOrders.length);

    const { status, body } = await client.call('createServiceOrder', {
      headers: { 'Idempotency-Key': '6f1d7b52-1d0c-4d8e-9c1e-2b7f3c9a0e11' },
      body: {
        protocolNumber: 'KIT-E2E-1',
        assetType: 'POLE',
        requestedAt: '2026-03-14T09:30:00.000-03:00',
        requester: { name: 'Maria', phone: '+5511987654321' },
        address: { street: 'Rua Augusta', number: '1500', neighborhood: 'Consolação', latitude: -23.5573, longitude: -46.6602 },
        problem: { description: 'Lâmpada apagada.' },
        attachments: [{ type: 'photo', contentBase64: PNG.toString('base64'), contentType: 'image/png', filename: 'poste.png' }],
      } as never,
    });
    expect(status).toBe(201);
    expect(body.alert.attachments).toEqual([expect.objectContaining({ success: true, contentType: 'image/png' })]);

    const team = demo.city.teams[0] as { id: string };
    await lumenJson(['order', 'assign', body.id, '--team', team.id], cwd, env);
    await lumenJson(['order', 'complete', body.id, '--note', 'Lâmpada trocada'], cwd, env);

    const seen: { type: string; order: string | undefined }[] = [];
    const drained = await kit.drainEvents(client, { onEvents: (events) => events.forEach((e) => seen.push({ type: e.eventType, order: e.serviceOrder?.id })) });
    expect(seen.filter((e) => e.order === body.id).map((e) => e.type)).toEqual(['ServiceOrder.StatusChanged', 'ServiceOrder.Completed']);
    const again = await kit.drainEvents(client, { since: drained.since, onEvents: () => {} });
    expect(again.received).toBe(0);
  });
});
