import { parseDateTime } from '../../lib/time.js';
import { createHash, type Hash } from 'node:crypto';
import type { OpenAPIBackend } from 'openapi-backend';
import partnerDocument from '../../../generated/openapi/partner.json' with { type: 'json' };
import type { Attachment, IntakeRequest } from '../../../generated/partner/types.gen.js';
import { AppError } from '../../lib/errors.js';
import { createOpenApi, unstorableParts, validationProblem } from '../../lib/openapi.js';
import type { AttachmentContentType } from '../../db/tables/intake.js';

/** A validated request, with optional fields made explicit and requestedAt in UTC. */
export interface IntakeInput {
  protocolNumber: string;
  requestedAt: Date;
  requester: { name: string; phone: string | null };
  lampType: string | null;
  /** The partner's reason code; null when missing or blank. */
  reasonCode: string | null;
  address: {
    street: string;
    number: string | null;
    neighborhood: string | null;
    reference: string | null;
    latitude: number | null;
    longitude: number | null;
  };
  problem: { description: string; additionalNotes: string | null };
  attachments: AttachmentInput[];
}

export type AttachmentInput =
  | { kind: 'url'; url: string; filename: string | null; contentType: AttachmentContentType }
  | { kind: 'inline'; contentBase64: string; filename: string | null; contentType: AttachmentContentType };

const INTAKE_OPERATION = 'createServiceOrder';
let validator: Promise<OpenAPIBackend> | null = null;

/**
 * The very validator the HTTP layer uses for POST /api/external/service-orders (the
 * same document, Ajv 2020 with formats, the same error mapping), so an item that
 * arrives by partner polling is judged exactly like a POSTed body.
 */
function intakeValidator(): Promise<OpenAPIBackend> {
  validator ??= createOpenApi(partnerDocument as unknown as Record<string, unknown>).catch((err: unknown) => {
    validator = null;
    throw err;
  });
  return validator;
}

/** Throws AppError validation-failed (422) with one errors[] entry per problem. */
export async function validateIntakeBody(rawBody: unknown, opts: { checkedByHttp?: boolean } = {}): Promise<IntakeInput> {
  // A POSTed body has passed the HTTP layer's scan and its validation against the same
  // operation; checking it again would hold a second copy of up to 40 MB of photos.
  if (opts.checkedByHttp) return toInput(rawBody as IntakeRequest);
  // A polled item arrives here without the HTTP layer's checks.
  const unstorable = unstorableParts(rawBody);
  if (unstorable.length > 0) throw new AppError('validation-failed', { count: unstorable.length }, unstorable);
  const api = await intakeValidator();
  const body = structuredClone(rawBody);
  const result = api.validateRequest(
    { method: 'post', path: '/api/external/service-orders', headers: { 'content-type': 'application/json' }, query: {}, body: body as object },
    INTAKE_OPERATION,
  );
  if (!result.valid) {
    const problem = validationProblem(result.errors ?? []);
    // Only the body can be wrong here; keep the status of a body problem.
    throw problem.code === 'validation-failed' ? problem : new AppError('validation-failed', { count: problem.errors?.length ?? 1 }, problem.errors);
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new AppError('validation-failed', { count: 1 }, [{ pointer: '', message: 'must be an object' }]);
  }
  return toInput(body as IntakeRequest);
}

/** The earliest requestedAt Lumen stores (documented on IntakeRequest.requestedAt). */
const EARLIEST_REQUESTED_AT = Date.UTC(2000, 0, 1);
/** How far ahead of Lumen's clock a partner's requestedAt may be: clocks drift. */
const REQUESTED_AT_AHEAD_MS = 5 * 60_000;

function toInput(body: IntakeRequest): IntakeInput {
  const reason = body.reasonCode?.trim() ? body.reasonCode : null;
  const requestedAt = parseDateTime(body.requestedAt);
  if (!requestedAt) {
    throw new AppError('validation-failed', { count: 1 }, [{ pointer: '/requestedAt', message: 'must be a valid date-time' }]);
  }
  if (requestedAt.getTime() < EARLIEST_REQUESTED_AT || requestedAt.getTime() > Date.now() + REQUESTED_AT_AHEAD_MS) {
    throw new AppError('validation-failed', { count: 1 }, [{ pointer: '/requestedAt', message: 'must lie between 2000-01-01T00:00:00Z and five minutes from now' }]);
  }
  return {
    protocolNumber: body.protocolNumber,
    requestedAt,
    requester: { name: body.requester.name, phone: body.requester.phone ?? null },
    lampType: body.lampType ?? null,
    reasonCode: reason,
    address: {
      street: body.address.street,
      number: body.address.number ?? null,
      neighborhood: body.address.neighborhood ?? null,
      reference: body.address.reference ?? null,
      latitude: body.address.latitude ?? null,
      longitude: body.address.longitude ?? null,
    },
    problem: { description: body.problem.description, additionalNotes: body.problem.additionalNotes ?? null },
    attachments: (body.attachments ?? []).map(toAttachment),
  };
}

function toAttachment(a: Attachment): AttachmentInput {
  const filename = a.filename ?? null;
  if ('url' in a) return { kind: 'url', url: a.url, filename, contentType: a.contentType };
  return { kind: 'inline', contentBase64: a.contentBase64, filename, contentType: a.contentType };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Idempotency-Key: a UUID, bare or as a quoted structured-field string ("<uuid>").
 * Returns the lowercase UUID, null when absent; 400 invalid-idempotency-key otherwise.
 */
export function parseIdempotencyKey(raw: string | readonly string[] | null | undefined): string | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== 'string') {
    if (raw.length !== 1) throw new AppError('invalid-idempotency-key', {}, [{ pointer: '/header/Idempotency-Key', message: 'must be sent once' }]);
    return parseIdempotencyKey(raw[0]);
  }
  let value = raw.trim();
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
  if (!UUID.test(value)) throw new AppError('invalid-idempotency-key', {}, [{ pointer: '/header/Idempotency-Key', message: 'must be a UUID, bare or in double quotes' }]);
  return value.toLowerCase();
}

/** JSON with object keys sorted at every level: equal bodies give equal text whatever their key order or spacing. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * What "same body" means for an Idempotency-Key: the SHA-256 of the canonical JSON.
 * Fed to the hash piece by piece, never built as one text: a body with 40 MB of
 * photos would otherwise be copied twice more (the text, and its UTF-8 bytes).
 */
export function requestHash(rawBody: unknown): Buffer {
  const h = createHash('sha256');
  hashCanonical(rawBody, h);
  return h.digest();
}

/** Printable ASCII without `"` and `\`: JSON.stringify only adds the quotes. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** Feeds `h` exactly the bytes of canonicalJson(value). */
function hashCanonical(value: unknown, h: Hash): void {
  if (Array.isArray(value)) {
    h.update('[');
    value.forEach((v, i) => {
      if (i > 0) h.update(',');
      hashCanonical(v, h);
    });
    h.update(']');
  } else if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    h.update('{');
    entries.forEach(([k, v], i) => {
      h.update(`${i > 0 ? ',' : ''}${JSON.stringify(k)}:`);
      hashCanonical(v, h);
    });
    h.update('}');
  } else if (typeof value === 'string' && value.length > 256 && PLAIN.test(value)) {
    h.update('"').update(value).update('"');
  } else {
    h.update(JSON.stringify(value) ?? 'null');
  }
}
