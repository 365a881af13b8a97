/**
 * Draws the console's app icons (the favicon's lamp: a dark square, a lit amber lamp on
 * a pale pole) as PNGs for the web app manifest: 192 and 512 px, and a maskable 512 with
 * the lamp inside the safe zone. Drawn here, with no image library and nothing
 * downloaded; the PNGs are committed (src/console/web/icons/). Run again after changing
 * the drawing: `npx tsx scripts/console-icons.ts`.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

type Rgba = [number, number, number, number];
const NAVY: Rgba = [0x14, 0x21, 0x3d, 255];
const AMBER: Rgba = [0xf7, 0xb5, 0x00, 255];
const POLE: Rgba = [0xdf, 0xe5, 0xf2, 255];
const CLEAR: Rgba = [0, 0, 0, 0];

/** The favicon's 32-unit drawing at `size` px; `inset` shrinks it toward the centre (maskable). */
function pixel(x: number, y: number, size: number, maskable: boolean): Rgba {
  const u = 32 / size;
  const inset = maskable ? 0.7 : 1;
  // Coordinates in the 32-unit drawing, scaled about the centre.
  const gx = 16 + ((x + 0.5) * u - 16) / inset;
  const gy = 16 + ((y + 0.5) * u - 16) / inset;
  if (!maskable) {
    const r = 6;
    const cx = Math.min(Math.max(gx, r), 32 - r);
    const cy = Math.min(Math.max(gy, r), 32 - r);
    if ((gx - cx) ** 2 + (gy - cy) ** 2 > r * r) return CLEAR;
  }
  if ((gx - 16) ** 2 + (gy - 13) ** 2 <= 49) return AMBER;
  if (gx >= 14 && gx <= 18 && gy >= 20 && gy <= 29) return POLE;
  return NAVY;
}

function png(size: number, maskable: boolean): Buffer {
  const table = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf: Buffer) => {
    let c = 0xffffffff;
    for (const b of buf) c = table[(c ^ b) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const out = Buffer.alloc(12 + data.length);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc(body), 8 + data.length);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 6, 0, 0, 0], 8); // 8-bit RGBA
  const raw = Buffer.alloc(size * (1 + size * 4));
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) raw.set(pixel(x, y, size, maskable), y * (1 + size * 4) + 1 + x * 4);
  }
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', zlib.deflateSync(raw, { level: 9 })), chunk('IEND', Buffer.alloc(0))]);
}

const dir = path.resolve('src/console/web/icons');
writeFileSync(path.join(dir, 'icon-192.png'), png(192, false));
writeFileSync(path.join(dir, 'icon-512.png'), png(512, false));
writeFileSync(path.join(dir, 'icon-maskable-512.png'), png(512, true));
process.stdout.write(`icons written to ${dir}\n`);
