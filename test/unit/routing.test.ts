import { OpenAPIBackend, type Document } from 'openapi-backend';
import { describe, expect, it } from 'vitest';
import admin from '../../generated/openapi/admin.json' with { type: 'json' };
import open311 from '../../generated/openapi/open311.json' with { type: 'json' };
import partner from '../../generated/openapi/partner.json' with { type: 'json' };
import sandbox from '../../generated/openapi/sandbox.json' with { type: 'json' };
import telemetry from '../../generated/openapi/telemetry.json' with { type: 'json' };
import { AppError } from '../../src/lib/errors.js';
import { createOpenApi, matchOperation } from '../../src/lib/openapi.js';

const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete', 'options', 'trace'];

/** What openapi-backend's own router answers: the operation, or 404/405 with the methods it knows for the path. */
function libraryAnswer(router: OpenAPIBackend['router'], method: string, path: string): string {
  try {
    return router.matchOperation({ method, path, headers: {} }, true).operationId!;
  } catch (err) {
    const status = (err as Error).message.slice(0, 3);
    if (status !== '405') return status;
    const allow = ['get', 'head', 'post', 'put', 'patch', 'delete', 'options'].filter((m) => router.matchOperation({ method: m, path, headers: {} }) !== undefined);
    return `405 ${allow.map((m) => m.toUpperCase()).join(', ')}`;
  }
}

function ourAnswer(api: OpenAPIBackend, method: string, path: string): string {
  try {
    return matchOperation(api, { method, path, headers: {} }).operationId!;
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return err.status === 405 ? `405 ${err.headers?.allow ?? ''}` : String(err.status);
  }
}

describe('routing', () => {
  it.each([
    ['admin', admin],
    ['open311', open311],
    ['partner', partner],
    ['sandbox', sandbox],
    ['telemetry', telemetry],
  ])('matches every path of the %s document as openapi-backend does (operation, 404, 405 and its Allow)', async (_name, document) => {
    const api = await createOpenApi(document as Record<string, unknown>);
    // A fresh router over the same document: the library's own rules, not our table's.
    const library = new OpenAPIBackend({ definition: structuredClone(document) as unknown as Document, quick: true, validate: false });
    await library.init();
    // Its flattening of the document, done once (it redoes it per match); the matching is its own.
    const operations = library.router.getOperations();
    library.router.getOperations = () => operations;
    const paths = Object.keys((document as { paths: Record<string, unknown> }).paths);
    const probes = new Set<string>(['/', '/nothing-here', '//', '/api', '/api/']);
    for (const p of paths) {
      const filled = p.replace(/\{[^}]+\}/g, 'x-1');
      for (const probe of [p, filled, `${filled}/`, `${filled}//`, `${filled}/more`, filled.replace(/\/[^/]+$/, ''), `${filled}?a=1`, ` ${filled} `, filled.toUpperCase()]) probes.add(probe);
    }
    let compared = 0;
    for (const path of probes) {
      for (const method of METHODS) {
        expect(ourAnswer(api, method, path), `${method.toUpperCase()} ${path}`).toBe(libraryAnswer(library.router, method, path));
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(paths.length * METHODS.length);
  });
});
