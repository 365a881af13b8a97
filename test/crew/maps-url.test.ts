import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

const dataDir = () => mkdtempSync(path.join(os.tmpdir(), 'lumen-config-'));

describe('LUMEN_MAPS_URL_TEMPLATE (the order page\'s "navigate" link)', () => {
  it("defaults to OpenStreetMap's directions, takes an http(s) template with {lat} and {lon}, refuses anything else", () => {
    const dir = dataDir();
    expect(loadConfig({ LUMEN_DATA_DIR: dir }).mapsUrlTemplate).toBe('https://www.openstreetmap.org/directions?to={lat},{lon}');
    const google = 'https://www.google.com/maps/dir/?api=1&destination={lat},{lon}';
    expect(loadConfig({ LUMEN_DATA_DIR: dir, LUMEN_MAPS_URL_TEMPLATE: google }).mapsUrlTemplate).toBe(google);
    expect(() => loadConfig({ LUMEN_DATA_DIR: dir, LUMEN_MAPS_URL_TEMPLATE: 'https://maps.city.example/route' })).toThrow(/must hold \{lat\} and \{lon\}/);
    expect(() => loadConfig({ LUMEN_DATA_DIR: dir, LUMEN_MAPS_URL_TEMPLATE: 'javascript:alert({lat},{lon})' })).toThrow(/must be an http/);
  });
});
