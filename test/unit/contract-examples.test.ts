import partner from '../../generated/openapi/partner.json' with { type: 'json' };
import partnerPolling from '../../generated/openapi/partner-polling.json' with { type: 'json' };
import sandbox from '../../generated/openapi/sandbox.json' with { type: 'json' };
import telemetry from '../../generated/openapi/telemetry.json' with { type: 'json' };
import { describe, expect, it } from 'vitest';

type Doc = Record<string, any>;

function deref(doc: Doc, node: any): any {
  let n = node;
  for (let i = 0; n && typeof n === 'object' && typeof n.$ref === 'string' && i < 20; i++) {
    n = n.$ref
      .replace(/^#\//, '')
      .split('/')
      .reduce((x: any, part: string) => x?.[part.replaceAll('~1', '/').replaceAll('~0', '~')], doc);
  }
  return n;
}

/** Request bodies and responses with content but no example: what `prism mock` could only make up. */
export function withoutExamples(doc: Doc): string[] {
  const missing: string[] = [];
  const check = (where: string, content: Record<string, any> | undefined) => {
    for (const [type, media] of Object.entries(content ?? {})) {
      if (!media.example && !(media.examples && Object.keys(media.examples).length > 0)) missing.push(`${where} ${type}`);
    }
  };
  for (const item of Object.values<Record<string, any>>(doc.paths ?? {})) {
    for (const [method, op] of Object.entries<any>(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      check(`${op.operationId} request`, deref(doc, op.requestBody)?.content);
      for (const [status, response] of Object.entries(op.responses ?? {})) check(`${op.operationId} ${status}`, deref(doc, response)?.content);
    }
  }
  return missing;
}

describe('examples in the partner-facing contracts (what prism mock answers)', () => {
  it.each([
    ['partner.yaml', partner],
    ['partner-polling.yaml', partnerPolling],
    ['sandbox.yaml', sandbox],
    ['telemetry.yaml', telemetry],
  ])('%s has an example for every request body, every response and every documented error', (_name, doc) => {
    expect(withoutExamples(doc as Doc)).toEqual([]);
  });

  it('the check itself notices a response without an example', () => {
    const doc = { paths: { '/x': { get: { operationId: 'x', responses: { '200': { content: { 'application/json': { schema: {} } } }, '404': { $ref: '#/components/responses/NotFound' } } } } }, components: { responses: { NotFound: { content: { 'application/problem+json': { examples: { a: { value: {} } } } } } } } };
    expect(withoutExamples(doc)).toEqual(['x 200 application/json']);
  });
});
