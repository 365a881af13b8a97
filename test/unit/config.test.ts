import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseByteSize } from '../../src/config.js';

const dataDir = () => mkdtempSync(path.join(os.tmpdir(), 'lumen-config-'));

describe('config', () => {
  it('has sane defaults', () => {
    const dir = dataDir();
    const c = loadConfig({ LUMEN_DATA_DIR: dir });
    expect(c.databaseUrl).toBeNull();
    expect(c.port).toBe(8080);
    expect(c.host).toBe('0.0.0.0');
    expect(c.environment).toBe('development');
    expect(c.allowLoopback).toBe(false);
    expect(c.bodyLimitBytes).toBe(40 * 1024 * 1024);
    expect(c.bodyTimeoutMs).toBe(60_000);
    expect(c.secretKeySource).toBe('data-dir');
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('takes the direct database URL from LUMEN_DIRECT_DATABASE_URL, else DATABASE_URL', () => {
    const dir = dataDir();
    const pooled = 'postgres://lumen@pgbouncer:6432/lumen';
    expect(loadConfig({ LUMEN_DATA_DIR: dir, DATABASE_URL: pooled }).directDatabaseUrl).toBe(pooled);
    expect(loadConfig({ LUMEN_DATA_DIR: dir, DATABASE_URL: pooled, LUMEN_DIRECT_DATABASE_URL: 'postgres://lumen@db:5432/lumen' }).directDatabaseUrl).toBe('postgres://lumen@db:5432/lumen');
    expect(loadConfig({ LUMEN_DATA_DIR: dir }).directDatabaseUrl).toBeNull();
    expect(() => loadConfig({ LUMEN_DATA_DIR: dir, LUMEN_DIRECT_DATABASE_URL: 'postgres://lumen@db/lumen' })).toThrow(/LUMEN_DIRECT_DATABASE_URL needs DATABASE_URL/);
    expect(() => loadConfig({ LUMEN_DATA_DIR: dir, DATABASE_URL: pooled, LUMEN_DIRECT_DATABASE_URL: 'mysql://x/y' })).toThrow(/LUMEN_DIRECT_DATABASE_URL must be a postgres/);
  });

  it("reads the console's basemap: OpenStreetMap by default, none, or an http(s) XYZ template", () => {
    const dir = dataDir();
    expect(loadConfig({ LUMEN_DATA_DIR: dir }).mapTileUrl).toBe('https://tile.openstreetmap.org/{z}/{x}/{y}.png');
    expect(loadConfig({ LUMEN_DATA_DIR: dir }).mapTileAttribution).toBe('© OpenStreetMap contributors');
    expect(loadConfig({ LUMEN_DATA_DIR: dir, LUMEN_MAP_TILE_URL: 'none' }).mapTileUrl).toBeNull();
    expect(loadConfig({ LUMEN_DATA_DIR: dir, LUMEN_MAP_TILE_URL: 'https://{s}.tiles.city.example/{z}/{x}/{y}.png' }).mapTileUrl).toBe('https://{s}.tiles.city.example/{z}/{x}/{y}.png');
    expect(() => loadConfig({ LUMEN_DATA_DIR: dir, LUMEN_MAP_TILE_URL: 'https://tiles.city.example/map.png' })).toThrow(/LUMEN_MAP_TILE_URL must hold \{z\}/);
    expect(() => loadConfig({ LUMEN_DATA_DIR: dir, LUMEN_MAP_TILE_URL: 'ftp://tiles/{z}/{x}/{y}' })).toThrow(/LUMEN_MAP_TILE_URL must be an http/);
  });

  it('reads partner reads from LUMEN_READ_DATABASE_URL while it is at most LUMEN_READ_MAX_LAG behind (default 30 s)', () => {
    const dir = dataDir();
    const db = 'postgres://lumen@db:5432/lumen';
    const c = loadConfig({ LUMEN_DATA_DIR: dir, DATABASE_URL: db });
    expect([c.readDatabaseUrl, c.readMaxLagMs]).toEqual([null, 30_000]);
    const r = loadConfig({ LUMEN_DATA_DIR: dir, DATABASE_URL: db, LUMEN_READ_DATABASE_URL: 'postgres://lumen@replica:5432/lumen', LUMEN_READ_MAX_LAG: '5s' });
    expect([r.readDatabaseUrl, r.readMaxLagMs]).toEqual(['postgres://lumen@replica:5432/lumen', 5_000]);
    expect(() => loadConfig({ LUMEN_DATA_DIR: dir, LUMEN_READ_DATABASE_URL: 'postgres://lumen@replica/lumen' })).toThrow(/LUMEN_READ_DATABASE_URL needs DATABASE_URL/);
    expect(() => loadConfig({ LUMEN_DATA_DIR: dir, DATABASE_URL: db, LUMEN_READ_MAX_LAG: '10' })).toThrow(/LUMEN_READ_MAX_LAG must be a duration/);
    expect(() => loadConfig({ LUMEN_DATA_DIR: dir, DATABASE_URL: db, LUMEN_READ_MAX_LAG: '50ms' })).toThrow(/LUMEN_READ_MAX_LAG must be a duration/);
  });

  it('keeps a generated secret key in the data directory across loads', () => {
    const dir = dataDir();
    const a = loadConfig({ LUMEN_DATA_DIR: dir });
    const b = loadConfig({ LUMEN_DATA_DIR: dir });
    expect(a.secretKey.equals(b.secretKey)).toBe(true);
    expect(readFileSync(path.join(dir, 'secret.key'), 'utf8').trim()).toBe(a.secretKey.toString('hex'));
  });

  it('names every bad variable at once', () => {
    let error: unknown;
    try {
      loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x/y', LUMEN_LOG_LEVEL: 'loud', LUMEN_ALLOW_LOOPBACK: 'maybe', LUMEN_SECRET_KEY: 'short', LUMEN_BODY_TIMEOUT_MS: '5s' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    for (const name of ['PORT', 'DATABASE_URL', 'LUMEN_LOG_LEVEL', 'LUMEN_ALLOW_LOOPBACK', 'LUMEN_SECRET_KEY', 'LUMEN_BODY_TIMEOUT_MS']) expect(problems).toContain(name);
  });

  it('refuses the embedded database in production unless LUMEN_EMBEDDED_IN_PRODUCTION=true says so', () => {
    const key = { LUMEN_SECRET_KEY: '22'.repeat(32), LUMEN_PUBLIC_URL: 'https://lumen.city.example' };
    expect(() => loadConfig({ LUMEN_ENVIRONMENT: 'production', ...key })).toThrow(/production needs DATABASE_URL[\s\S]*LUMEN_EMBEDDED_IN_PRODUCTION=true/);
    expect(loadConfig({ LUMEN_ENVIRONMENT: 'production', LUMEN_EMBEDDED_IN_PRODUCTION: 'true', ...key }).databaseUrl).toBeNull();
    expect(loadConfig({ LUMEN_ENVIRONMENT: 'production', DATABASE_URL: 'postgres://x/y', ...key }).databaseUrl).toBe('postgres://x/y');
    expect(() => loadConfig({ LUMEN_ENVIRONMENT: 'production', LUMEN_EMBEDDED_IN_PRODUCTION: 'maybe', ...key })).toThrow(/LUMEN_EMBEDDED_IN_PRODUCTION/);
  });

  it('needs LUMEN_PUBLIC_URL in production (absolute URLs and the origin check never come from Host)', () => {
    const base = { LUMEN_ENVIRONMENT: 'production', DATABASE_URL: 'postgres://x/y', LUMEN_SECRET_KEY: '22'.repeat(32) };
    expect(() => loadConfig(base)).toThrow(/LUMEN_PUBLIC_URL is required in production/);
    expect(loadConfig({ ...base, LUMEN_PUBLIC_URL: 'https://lumen.city.example/' }).publicOrigin).toBe('https://lumen.city.example');
  });

  it('refuses loopback and a missing secret key in production', () => {
    expect(() => loadConfig({ LUMEN_ENVIRONMENT: 'production', LUMEN_ALLOW_LOOPBACK: 'true', DATABASE_URL: 'postgres://x/y' })).toThrow(/LUMEN_ALLOW_LOOPBACK[\s\S]*LUMEN_SECRET_KEY|LUMEN_SECRET_KEY[\s\S]*LUMEN_ALLOW_LOOPBACK/);
  });

  it('bounds what one process holds: body and attachment memory, outbound requests', () => {
    const dir = dataDir();
    const d = loadConfig({ LUMEN_DATA_DIR: dir });
    expect([d.bodyMemoryBytes, d.attachmentMemoryBytes, d.outboundConnections]).toEqual([192 * 1024 * 1024, 128 * 1024 * 1024, 64]);
    const c = loadConfig({ LUMEN_DATA_DIR: dir, LUMEN_BODY_MEMORY: '64MiB', LUMEN_ATTACHMENT_MEMORY: '20mb', LUMEN_OUTBOUND_CONNECTIONS: '8' });
    expect([c.bodyMemoryBytes, c.attachmentMemoryBytes, c.outboundConnections]).toEqual([64 * 1024 * 1024, 20 * 1024 * 1024, 8]);
    // An attachment budget below one attachment (5 MiB) or a body budget below 1 MiB is a mistake, named with the others.
    expect(() => loadConfig({ LUMEN_DATA_DIR: dir, LUMEN_BODY_MEMORY: '512kb', LUMEN_ATTACHMENT_MEMORY: '4MiB', LUMEN_OUTBOUND_CONNECTIONS: '0' })).toThrow(
      /LUMEN_BODY_MEMORY[\s\S]*LUMEN_ATTACHMENT_MEMORY[\s\S]*LUMEN_OUTBOUND_CONNECTIONS/,
    );
  });

  it('sizes the database pool: 6 connections unless LUMEN_DB_POOL_SIZE says otherwise', () => {
    const dir = dataDir();
    expect(loadConfig({ LUMEN_DATA_DIR: dir }).dbPoolSize).toBe(6);
    expect(loadConfig({ LUMEN_DATA_DIR: dir, LUMEN_DB_POOL_SIZE: '24' }).dbPoolSize).toBe(24);
    expect(() => loadConfig({ LUMEN_DATA_DIR: dir, LUMEN_DB_POOL_SIZE: '1' })).toThrow(/LUMEN_DB_POOL_SIZE/);
  });

  it('parses sizes', () => {
    expect(parseByteSize('40MiB')).toBe(40 * 1024 * 1024);
    expect(parseByteSize('512kb')).toBe(512 * 1024);
    expect(parseByteSize('100')).toBe(100);
    expect(parseByteSize('lots')).toBeNull();
  });
});
