/**
 * A full blob store. What a full disk does to a writer (a write fails part-way, also
 * for root, whatever the permissions) is produced here with a file-size limit on the
 * `lumen serve` process: `ulimit -f 16` (8 KiB under /bin/sh's 512-byte blocks) with
 * SIGXFSZ ignored, so a write past the limit fails with EFBIG after writing what fit.
 * Small photos still fit; larger ones fail mid-file. Each request is accepted, each
 * photo reports whether it was stored, no partial file is left, and once space is back
 * a resend stores what failed in its original place.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runtime } from '../../../src/runtime.js';
import { makePartner, makeTenant } from '../../support/factories.js';
import { recordReliability } from '../../support/reliability.js';
import { intakeBody, JPEG } from '../../intake/support.js';
import { createDatabase, freePort, Lumen, openTestRuntime, removeTempDirs, requireExecutable, serveEnv, tempDir } from './support.js';

const SECTION = 'Faults: blob store failing';
/** A JPEG of 100 KiB (valid magic bytes): far past the limit. */
const BIG = Buffer.concat([JPEG.subarray(0, 4), Buffer.alloc(100 * 1024, 7)]);

let db: Awaited<ReturnType<typeof createDatabase>>;
let rt: Runtime;
const stopped: Lumen[] = [];

beforeAll(async () => {
  requireExecutable();
  db = await createDatabase('blob_full');
  rt = await openTestRuntime(db.url);
});
afterAll(async () => {
  for (const l of stopped) await l.stop().catch(() => {});
  await rt?.close();
  await db?.drop();
  removeTempDirs();
});

function files(dir: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return [];
  }
  return entries.flatMap((f) => (statSync(path.join(dir, f)).isDirectory() ? files(path.join(dir, f)).map((x) => path.join(f, x)) : [f]));
}

describe('a full blob store', () => {
  it('accepts the requests, stores what fits, reports what did not, leaves no partial file, and stores it on a resend once space is back', async () => {
    const tenant = await makeTenant(rt);
    const p = await makePartner(rt, { tenantId: tenant.id });
    const dataDir = tempDir('full');
    const env = serveEnv(db.url, { LUMEN_DATA_DIR: dataDir });
    const port = await freePort();
    const full = new Lumen('full', port, env, "trap '' XFSZ; ulimit -f 16");
    stopped.push(full);
    full.start();
    await full.waitReady();

    const photos = [
      { type: 'photo', contentBase64: JPEG.toString('base64'), filename: 'small.jpg', contentType: 'image/jpeg' },
      { type: 'photo', contentBase64: BIG.toString('base64'), filename: 'big.jpg', contentType: 'image/jpeg' },
    ];
    const post = (base: string, protocol: string) =>
      fetch(`${base}/api/external/service-orders`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': p.apiKey, 'accept-language': 'en' }, body: JSON.stringify(intakeBody(protocol, { attachments: photos })) });
    const protocols = ['FULL-1', 'FULL-2', 'FULL-3', 'FULL-4'];
    const answers = [];
    for (const n of protocols) {
      const res = await post(full.base, n);
      expect(res.status).toBe(201);
      answers.push((await res.json()) as { alert: { id: string; attachments: { success: boolean; error: string | null; blobPath: string | null; filename: string }[] } });
    }
    for (const a of answers) {
      expect(a.alert.attachments.map((x) => [x.filename, x.success, x.error])).toEqual([
        ['small.jpg', true, null],
        ['big.jpg', false, 'The attachment could not be stored; resend the request to try again.'],
      ]);
    }
    const blobs = path.join(dataDir, 'blobs');
    // Only the small photos, whole; the big ones' partial files were removed.
    expect(files(blobs).sort()).toEqual(answers.map((a) => a.alert.attachments[0]!.blobPath!).sort());
    for (const a of answers) expect(readFileSync(path.join(blobs, a.alert.attachments[0]!.blobPath!)).equals(JPEG)).toBe(true);
    expect(full.output()).toContain('EFBIG');
    await full.stop();

    // Space is back (no limit): the partners' resends store the big photos in place.
    const roomy = new Lumen('roomy', port, env);
    stopped.push(roomy);
    roomy.start();
    await roomy.waitReady();
    for (const [i, n] of protocols.entries()) {
      const res = await post(roomy.base, n);
      expect(res.status).toBe(200);
      const body = (await res.json()) as (typeof answers)[number];
      expect(body.alert.id).toBe(answers[i]!.alert.id);
      expect(body.alert.attachments.map((x) => x.success)).toEqual([true, true]);
      expect(readFileSync(path.join(blobs, body.alert.attachments[1]!.blobPath!)).equals(BIG)).toBe(true);
    }
    expect(files(blobs).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    recordReliability(SECTION, {
      item: 'requests accepted while the disk was full (file-size limit, writes failing part-way)',
      figure: `${protocols.length} of ${protocols.length}`,
      detail: `lumen serve under ulimit -f with SIGXFSZ ignored: ${protocols.length} small photos stored, ${protocols.length} large ones reported not stored with no partial file left; resent once space was back, all stored in place`,
    });
  }, 120_000);
});
