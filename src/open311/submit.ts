import { randomUUID } from 'node:crypto';
import type { RequestCreated } from '../../generated/open311/types.gen.js';
import type { AppDeps } from '../app-deps.js';
import { findPoleByCode } from '../db/repositories/open311.repository.js';
import { AppError, type FieldError } from '../lib/errors.js';
import type { Language } from '../lib/i18n.js';
import { submitIntake } from '../services/intake/index.js';
import type { Open311Caller } from './caller.js';
import { requireService, serviceNotice } from './catalogue.js';

/** A POST requests body after parsing: form fields or JSON members, `attribute[…]` gathered in `attribute`. */
export interface Open311Fields {
  readonly [field: string]: unknown;
  readonly attribute?: Readonly<Record<string, string | readonly string[]>>;
  /** The photo sent as the `media` file of a multipart form. */
  readonly media?: { readonly data: Buffer; readonly contentType: string };
}

const PHOTO_TYPES = new Set(['image/jpeg', 'image/png', 'image/webp']);

/** The photo's type: as declared when it is one the attachment path takes, else read from its first bytes (clients often send application/octet-stream); the attachment path checks it against the bytes either way. */
function mediaType(media: { data: Buffer; contentType: string }): string {
  if (PHOTO_TYPES.has(media.contentType)) return media.contentType;
  const b = media.data;
  if (b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
  if (b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP') return 'image/webp';
  return media.contentType;
}

/** Attributes Lumen reads; any other is kept in the request's notes. */
const ID_ATTRIBUTES = ['external_id', 'fixmystreet_id'] as const;
const KNOWN_ATTRIBUTES = new Set<string>([...ID_ATTRIBUTES, 'lamp_type', 'reference']);
const NOTES_LIMIT = 4000;

/** Where an intake field came from in the Open311 request, for error descriptions. */
const FIELD_OF: readonly [RegExp, string][] = [
  [/^\/protocolNumber/, 'attribute[external_id]'],
  [/^\/reasonCode/, 'service_code'],
  [/^\/lampType/, 'attribute[lamp_type]'],
  [/^\/address\/latitude/, 'lat'],
  [/^\/address\/longitude/, 'long'],
  [/^\/address\/reference/, 'attribute[reference]'],
  [/^\/address/, 'address_string'],
  [/^\/problem\/description/, 'description'],
  [/^\/problem/, 'description'],
  [/^\/requester\/phone/, 'phone'],
  [/^\/requester/, 'first_name'],
  [/^\/attachments/, 'media_url'],
];

const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);
const first = (v: string | readonly string[] | undefined): string | undefined => text(Array.isArray(v) ? v[0] : v);

/** A phone in E.164 once spaces, dots, dashes and brackets are gone (and 00 read as +); else undefined. */
function e164(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  const compact = raw.replace(/[\s().-]/g, '').replace(/^00/, '+');
  return /^\+[1-9][0-9]{1,14}$/.test(compact) ? compact : undefined;
}

/** "Rua Augusta, 1500, Consolação": street, then a house number when the second part starts with one, then the neighborhood. */
function splitAddress(raw: string): { street: string; number?: string; neighborhood?: string } {
  const parts = raw.split(',').map((p) => p.trim()).filter(Boolean);
  const [street = raw, second, ...rest] = parts;
  if (second && /^(\d+[A-Za-z]?|S\/?N)$/i.test(second)) return { street, number: second, ...(rest.length ? { neighborhood: rest.join(', ') } : {}) };
  return { street: raw.trim() };
}

function contentTypeOf(url: string): 'image/jpeg' | 'image/png' | 'image/webp' {
  const path = url.split(/[?#]/)[0]!.toLowerCase();
  if (path.endsWith('.png')) return 'image/png';
  if (path.endsWith('.webp')) return 'image/webp';
  return 'image/jpeg';
}

/**
 * POST requests: maps a GeoReport v2 request onto the partner API's IntakeRequest and
 * submits it through the one intake path (submitIntake: validation, idempotency by the
 * client's own id, geocoding, photo download, the city's triage policy). Answers the
 * alert's number when the request became a service order at once, else a token (the
 * alert's id) for GET tokens/{token}.
 */
export async function submitOpen311Request(deps: AppDeps, caller: Open311Caller, f: Open311Fields, opts: { lang: Language; signal?: AbortSignal }): Promise<{ status: 200 | 201; body: RequestCreated }> {
  if (!caller.scopes.includes('canCreateServiceOrders') && !caller.scopes.includes('canCreateAlerts')) throw new AppError('forbidden', { scopes: 'canCreateServiceOrders | canCreateAlerts' });
  const errors: FieldError[] = [];
  const code = text(f.service_code) ?? '';
  const reason = code ? await requireService(deps, caller, code).catch((err: unknown) => (err instanceof AppError && err.code === 'not-found' ? null : Promise.reject(err))) : null;
  if (!reason) errors.push({ pointer: '/service_code', message: code ? `${code} is not a service of this city` : 'is required' });

  const attributes = f.attribute ?? {};
  const lat = typeof f.lat === 'number' ? f.lat : undefined;
  const long = typeof f.long === 'number' ? f.long : undefined;
  const addressString = text(f.address_string);
  const addressId = text(f.address_id);
  let address: Record<string, unknown> | null = null;
  if ((lat === undefined) !== (long === undefined)) errors.push({ pointer: lat === undefined ? '/lat' : '/long', message: 'lat and long come together' });
  else if (lat !== undefined && long !== undefined) address = { ...(addressString ? splitAddress(addressString) : { street: `${lat}, ${long}` }), latitude: lat, longitude: long };
  else if (addressString) address = splitAddress(addressString);
  else if (addressId) {
    const pole = await findPoleByCode(deps.db, caller.tenantId, addressId);
    if (!pole) errors.push({ pointer: '/address_id', message: `${addressId} is not a pole of this city` });
    else address = { street: pole.address || addressId, ...(pole.neighborhood ? { neighborhood: pole.neighborhood } : {}), latitude: pole.latitude, longitude: pole.longitude };
  } else errors.push({ pointer: '/lat', message: 'give lat and long, address_string or address_id' });
  if (errors.length > 0) throw new AppError('validation-failed', { count: errors.length }, errors);
  const reference = first(attributes.reference);
  if (reference) address!.reference = reference;

  const firstName = text(f.first_name);
  const lastName = text(f.last_name);
  const email = text(f.email);
  const phone = text(f.phone);
  const notes = [
    email ? `email: ${email}` : null,
    phone && !e164(phone) ? `phone: ${phone}` : null,
    text(f.device_id) ? `device_id: ${text(f.device_id)}` : null,
    text(f.account_id) ? `account_id: ${text(f.account_id)}` : null,
    ...Object.entries(attributes)
      .filter(([k]) => !KNOWN_ATTRIBUTES.has(k))
      .map(([k, v]) => `${k}: ${(Array.isArray(v) ? v : [v]).join(', ')}`),
  ].filter((n): n is string => n !== null);
  const ownId = ID_ATTRIBUTES.map((k) => first(attributes[k])).find(Boolean);
  const mediaUrl = text(f.media_url);
  const lampType = first(attributes.lamp_type);

  const body = {
    protocolNumber: ownId ?? `open311-${randomUUID()}`,
    assetType: 'POLE',
    requestedAt: new Date().toISOString(),
    requester: { name: ([firstName, lastName].filter(Boolean).join(' ') || email || 'Open311').slice(0, 200), ...(e164(phone) ? { phone: e164(phone) } : {}) },
    ...(lampType ? { lampType } : {}),
    reasonCode: reason!.code,
    address,
    problem: { description: text(f.description) ?? (opts.lang === 'en' ? reason!.name_en : reason!.name_pt), ...(notes.length ? { additionalNotes: notes.join('\n').slice(0, NOTES_LIMIT) } : {}) },
    ...(f.media || mediaUrl
      ? {
          attachments: [
            ...(f.media ? [{ type: 'photo', contentBase64: f.media.data.toString('base64'), contentType: mediaType(f.media) }] : []),
            ...(mediaUrl ? [{ type: 'photo', url: mediaUrl, contentType: contentTypeOf(mediaUrl) }] : []),
          ],
        }
      : {}),
  };
  const fieldOf = (pointer: string): string => {
    // The attachments are the media file (first, when sent) and the media_url.
    if (f.media && /^\/attachments\/0(\/|$)/.test(pointer)) return 'media';
    return FIELD_OF.find(([re]) => re.test(pointer))?.[1] ?? pointer.slice(1);
  };
  let result;
  try {
    result = await submitIntake(deps, caller, body, { lang: opts.lang, signal: opts.signal, internalReason: true });
  } catch (err) {
    throw err instanceof AppError && err.errors ? new AppError(err.code, err.params, err.errors.map((e) => ({ ...e, pointer: `/${fieldOf(e.pointer)}` })), err.headers) : err;
  }
  const { alert } = result.body;
  const notice = serviceNotice(reason!.sla_hours, opts.lang);
  const hasOrder = result.body.internalProtocol !== undefined;
  return {
    status: result.status,
    body: [hasOrder ? { service_request_id: String(alert.alertNumber), service_notice: notice, account_id: null } : { token: alert.id, service_notice: notice, account_id: null }],
  };
}
