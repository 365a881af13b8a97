import { alertsExport, auditExport, ordersExport, tenantZone, type ExportWords } from '../../db/repositories/reports/export.repository.js';
import { inlineParameters } from '../../db/inline-sql.js';
import { AppError, type FieldError } from '../../lib/errors.js';
import type { Language } from '../../lib/i18n.js';
import { orderListFilter, type OrderListInput } from '../operations/index.js';
import { requireTenantRole, type AdminAccess } from '../operators/index.js';
import type { ServiceDeps } from '../deps.js';
import { isUuid } from '../tenants/index.js';
import { periodOf } from './report.js';
import { ALERT_STATUS, AUDIT_ACTION, ORDER_STATUS, pairs, PRIORITY, YES_NO } from './words.js';

/**
 * A CSV export ready to stream: the COPY statement (its SELECT with the parameters
 * written in as literals, since COPY takes none), what goes before PostgreSQL's rows
 * (a UTF-8 byte-order mark, so spreadsheet tools read the accents, and the header row in
 * the caller's language), and the download's file name.
 */
export interface CsvExport {
  readonly copySql: string;
  readonly prefix: Buffer;
  readonly filename: string;
}

const BOM = '\uFEFF';

/** A CSV field as RFC 4180 quotes it (header cells: they may hold commas in some language). */
function cell(v: string): string {
  return /[",\r\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v;
}

function csvExport(compiled: { sql: string; parameters: readonly unknown[] }, header: readonly string[], name: string): CsvExport {
  const select = inlineParameters(compiled.sql, compiled.parameters);
  return {
    copySql: `COPY (${select}) TO STDOUT WITH (FORMAT csv)`,
    prefix: Buffer.from(`${BOM}${header.map(cell).join(',')}\n`, 'utf8'),
    filename: `${name}-${new Date().toISOString().slice(0, 10)}.csv`,
  };
}

function wordsFor(lang: Language, status: typeof ORDER_STATUS): ExportWords {
  return { status: pairs(status, lang), priority: pairs(PRIORITY, lang), yesNo: [YES_NO[lang][0], YES_NO[lang][1]], reasonName: lang === 'en' ? 'name_en' : 'name_pt' };
}

/** The city's time zone, after checking the caller may read the city (404 as for an unknown one). */
async function readableCity(deps: ServiceDeps, access: AdminAccess, tenantId: string): Promise<string> {
  const resource = `tenant ${tenantId}`;
  if (!isUuid(tenantId)) throw new AppError('not-found', { resource });
  requireTenantRole(access, tenantId, 'viewer', resource);
  const zone = await tenantZone(deps.db, tenantId);
  if (!zone) throw new AppError('not-found', { resource });
  return zone;
}

const ORDER_HEADER = {
  'pt-BR': ['Número', 'Estado', 'Prioridade', 'Motivo', 'Equipe', 'Poste', 'Endereço', 'Bairro', 'Aberta em', 'Prazo', 'Encerrada em', 'Atrasada', 'Alertas', 'Parceiros'],
  en: ['Number', 'Status', 'Priority', 'Reason', 'Team', 'Pole', 'Address', 'Neighborhood', 'Opened', 'Deadline', 'Closed', 'Overdue', 'Alerts', 'Partners'],
} as const;

/** The city's service orders with the order list's filters, newest first. */
export async function serviceOrdersCsv(deps: ServiceDeps, access: AdminAccess, tenantId: string, input: Omit<OrderListInput, 'tenantId' | 'sort' | 'cursor' | 'limit'>, lang: Language): Promise<CsvExport> {
  const zone = await readableCity(deps, access, tenantId);
  const filter = (await orderListFilter(deps, access, { ...input, tenantId }))!;
  return csvExport(ordersExport(deps.db, filter, wordsFor(lang, ORDER_STATUS), zone), ORDER_HEADER[lang], lang === 'en' ? 'orders' : 'ordens');
}

const ALERT_HEADER = {
  'pt-BR': ['Número', 'Protocolo', 'Parceiro', 'Estado', 'Motivo', 'Prioridade', 'Endereço', 'Bairro', 'Recebido em', 'Prazo', 'Ordem de serviço'],
  en: ['Number', 'Protocol', 'Partner', 'Status', 'Reason', 'Priority', 'Address', 'Neighborhood', 'Received', 'Deadline', 'Service order'],
} as const;

/** The city's alerts, optionally of some statuses, of one partner, received within a period; newest first. */
export async function alertsCsv(deps: ServiceDeps, access: AdminAccess, tenantId: string, input: { status?: string; partner?: string; from?: string; to?: string }, lang: Language): Promise<CsvExport> {
  const zone = await readableCity(deps, access, tenantId);
  const statuses = input.status === undefined ? [] : input.status.split(',').map((s) => s.trim());
  const errors: FieldError[] = [];
  const bad = statuses.find((s) => !Object.hasOwn(ALERT_STATUS, s));
  if (bad !== undefined) errors.push({ pointer: '/query/status', message: `each status must be one of: ${Object.keys(ALERT_STATUS).join(', ')}` });
  if (errors.length > 0) throw new AppError('invalid-parameter', {}, errors);
  const range = input.from !== undefined || input.to !== undefined ? periodOf(input) : {};
  return csvExport(alertsExport(deps.db, { tenantId, statuses, partnerCode: input.partner, ...range }, wordsFor(lang, ALERT_STATUS), zone), ALERT_HEADER[lang], lang === 'en' ? 'alerts' : 'alertas');
}

const AUDIT_HEADER = {
  'pt-BR': ['Quando', 'Quem', 'O que', 'Objeto', 'Nota'],
  en: ['When', 'Who', 'What', 'Object', 'Note'],
} as const;

/** The city's audit log, optionally within a period; newest first. */
export async function auditCsv(deps: ServiceDeps, access: AdminAccess, tenantId: string, input: { from?: string; to?: string }, lang: Language): Promise<CsvExport> {
  const zone = await readableCity(deps, access, tenantId);
  const range = input.from !== undefined || input.to !== undefined ? periodOf(input) : {};
  return csvExport(auditExport(deps.db, tenantId, range, pairs(AUDIT_ACTION, lang), zone), AUDIT_HEADER[lang], lang === 'en' ? 'audit' : 'auditoria');
}
