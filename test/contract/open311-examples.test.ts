/**
 * Every answer of the Open311 document has an example in both of its formats, and the
 * XML example is the JSON example as Lumen writes it (the same toXml the service uses),
 * so the two never drift apart; the form and multipart bodies have examples too.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { toXml } from '../../src/open311/index.js';

type Node = Record<string, unknown>;
const doc = JSON.parse(readFileSync('generated/openapi/open311.json', 'utf8')) as Node;

function deref(node: unknown): Node {
  let n = node as Node;
  while (n && typeof n.$ref === 'string') {
    const parts = (n.$ref as string).replace(/^#\//, '').split('/').map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'));
    n = parts.reduce<Node>((at, p) => at[p] as Node, doc);
  }
  return n;
}

const ROOT: Record<string, string> = { getDiscovery: 'discovery', listServices: 'services', getServiceDefinition: 'service_definition' };

describe('the Open311 document’s examples', () => {
  const answers: [string, string, Node][] = [];
  for (const item of Object.values(doc.paths as Record<string, Node>)) {
    for (const op of Object.values(item) as Node[]) {
      for (const [status, response] of Object.entries(op.responses as Node)) answers.push([op.operationId as string, status, deref(response)]);
    }
  }

  it('covers every answer in JSON and XML, the XML being the JSON as the service writes it', () => {
    expect(answers.length).toBeGreaterThan(40);
    const missing: string[] = [];
    for (const [operationId, status, response] of answers) {
      const content = response.content as Record<string, Node> | undefined;
      if (!content) continue;
      const json = content['application/json']?.example;
      const xml = content['text/xml']?.example;
      if (json === undefined) missing.push(`${operationId} ${status} JSON`);
      if (xml === undefined) missing.push(`${operationId} ${status} XML`);
      if (json !== undefined && xml !== undefined) {
        const root = status.startsWith('2') ? (ROOT[operationId] ?? 'service_requests') : 'errors';
        expect((xml as string).trimEnd(), `${operationId} ${status}`).toBe(toXml(root, json).trimEnd());
      }
    }
    expect(missing).toEqual([]);
  });

  it('shows every request body form', () => {
    const post = (doc.paths as Record<string, Node>)['/open311/v2/requests.{format}']!.post as Node;
    const content = (post.requestBody as Node).content as Record<string, Node>;
    expect(Object.keys(content).sort()).toEqual(['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data']);
    for (const [type, media] of Object.entries(content)) expect(media.example, type).toBeDefined();
  });
});
