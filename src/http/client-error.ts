import { toXml } from '../open311/index.js';
import type { AppError } from '../lib/errors.js';
import type { Language } from '../lib/i18n.js';
import { problemType } from '../lib/errors.js';

/**
 * The path of a request the HTTP parser refused (431, 400, 408), from the bytes it had
 * read (Node's `rawPacket`): the problem's `instance`, and which surface's error shape to
 * answer in. Null when not even the request line arrived.
 */
export function refusedPath(rawPacket: unknown): string | null {
  if (!Buffer.isBuffer(rawPacket)) return null;
  const line = rawPacket.subarray(0, Math.min(rawPacket.length, 8192)).toString('latin1').split('\r\n', 1)[0]!;
  const target = /^[A-Z]+ (\S+)/.exec(line)?.[1];
  if (!target || !target.startsWith('/')) return null;
  return target.split(/[?#]/, 1)[0]!.slice(0, 1000);
}

/**
 * The body of such a refusal: problem+json with the request's path as `instance`, or,
 * on the Open311 surface, GeoReport v2's error list in the format its path asks for.
 */
export function clientErrorBody(problem: AppError, path: string | null, requestId: string, lang: Language): { contentType: string; body: string } {
  if (path?.startsWith('/open311/')) {
    const list = [{ code: problem.status, description: problem.detail(lang) }];
    return /\.xml$/i.test(path) ? { contentType: 'text/xml; charset=utf-8', body: toXml('errors', list) } : { contentType: 'application/json; charset=utf-8', body: JSON.stringify(list) };
  }
  const body = JSON.stringify({ type: problemType(problem.code), title: problem.title(lang), status: problem.status, detail: problem.detail(lang), instance: path ?? '/', requestId });
  return { contentType: 'application/problem+json; charset=utf-8', body };
}
