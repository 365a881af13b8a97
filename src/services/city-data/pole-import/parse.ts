import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { CsvError, csvRecords, type CsvRecord } from './csv.js';

/**
 * Reading pole files: CSV (header code,address,neighborhood,latitude,longitude,active,
 * device_identifier,circuit) and GeoJSON (a FeatureCollection of Point features, or one Feature
 * per line), streamed, with every row checked and every problem tied to its line (or,
 * in a FeatureCollection, its feature number).
 */

export type PoleFileFormat = 'csv' | 'geojson' | 'geojson-seq';

export interface PoleRecord {
  /** CSV: line where the row starts; GeoJSON: feature number (1-based) or line. */
  readonly line: number;
  readonly code: string;
  readonly address: string;
  readonly neighborhood: string;
  readonly latitude: number;
  readonly longitude: number;
  readonly active: boolean;
  readonly device: string | null;
  /** The circuit feeding the pole; undefined when the file has no circuit column (kept as it is). */
  readonly circuit?: string | null;
}

export interface RowError {
  readonly line: number;
  readonly code?: string;
  readonly message: string;
}

/** The file cannot be imported at all (nothing is imported). */
export class UnusableFileError extends Error {}

export interface Progress {
  bytes: number;
  totalBytes: number;
  rows: number;
}

const CSV_COLUMNS = ['code', 'address', 'neighborhood', 'latitude', 'longitude', 'active', 'device_identifier', 'circuit'] as const;
const REQUIRED = ['code', 'latitude', 'longitude'];
const TRUE = new Set(['true', '1', 'yes', 'y', 'sim', 's', 't']);
const FALSE = new Set(['false', '0', 'no', 'n', 'não', 'nao', 'f']);

/** Format from the extension, else from the first byte ('{' GeoJSON, RS a GeoJSON text sequence, else CSV). */
export async function detectFormat(file: string): Promise<PoleFileFormat> {
  const ext = path.extname(file).toLowerCase();
  if (ext === '.csv' || ext === '.txt') return 'csv';
  if (ext === '.geojson' || ext === '.json') return 'geojson';
  if (ext === '.geojsonl' || ext === '.geojsons' || ext === '.ndjson' || ext === '.jsonl') return 'geojson-seq';
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.alloc(64);
    const { bytesRead } = await fh.read(buf, 0, 64, 0);
    const head = buf.subarray(0, bytesRead).toString('utf8').replace(/^\uFEFF/, '').trimStart();
    if (head.startsWith('\u001e')) return 'geojson-seq';
    if (head.startsWith('{')) return 'geojson';
    return 'csv';
  } finally {
    await fh.close();
  }
}

function textValue(value: unknown, name: string, max: number, problems: string[]): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') {
    problems.push(`${name} must be text`);
    return '';
  }
  const s = value.trim();
  if (s.length > max) problems.push(`${name} must have at most ${max} characters`);
  return s;
}

function coordValue(value: unknown, name: string, limit: number, decimalComma: boolean, problems: string[]): number {
  let n = NaN;
  if (typeof value === 'number') n = value;
  else if (typeof value === 'string' && value.trim() !== '') n = Number(decimalComma ? value.trim().replace(',', '.') : value.trim());
  if (!Number.isFinite(n)) problems.push(`${name} must be a number`);
  else if (Math.abs(n) > limit) problems.push(`${name} must be from -${limit} to ${limit}`);
  return n;
}

/** Checks one row's values (strings from CSV, JSON values from GeoJSON). */
export function checkRow(line: number, v: { code: unknown; address?: unknown; neighborhood?: unknown; latitude: unknown; longitude: unknown; active?: unknown; device?: unknown; circuit?: unknown }, decimalComma = false): PoleRecord | RowError {
  const problems: string[] = [];
  const code = typeof v.code === 'number' ? String(v.code) : typeof v.code === 'string' ? v.code.trim() : '';
  if (code.length < 1 || code.length > 100) problems.push('code must have 1 to 100 characters');
  const address = textValue(v.address, 'address', 500, problems);
  const neighborhood = textValue(v.neighborhood, 'neighborhood', 200, problems);
  const latitude = coordValue(v.latitude, 'latitude', 90, decimalComma, problems);
  const longitude = coordValue(v.longitude, 'longitude', 180, decimalComma, problems);
  let active = true;
  if (typeof v.active === 'boolean') active = v.active;
  else if (typeof v.active === 'string' && v.active.trim() !== '') {
    const a = v.active.trim().toLowerCase();
    if (TRUE.has(a)) active = true;
    else if (FALSE.has(a)) active = false;
    else problems.push('active must be true or false');
  } else if (v.active !== undefined && v.active !== null && v.active !== '') problems.push('active must be true or false');
  let device: string | null = null;
  if (typeof v.device === 'string' && v.device.trim() !== '') device = v.device.trim();
  else if (typeof v.device === 'number') device = String(v.device);
  else if (v.device !== undefined && v.device !== null && v.device !== '') problems.push('device identifier must be text');
  if (device !== null && device.length > 100) problems.push('device identifier must have at most 100 characters');
  // An empty circuit clears it; a file (or feature) without one leaves it as it is.
  let circuit: string | null | undefined;
  if (typeof v.circuit === 'number') circuit = String(v.circuit);
  else if (typeof v.circuit === 'string') circuit = v.circuit.trim() === '' ? null : v.circuit.trim();
  else if (v.circuit === null) circuit = null;
  else if (v.circuit !== undefined) problems.push('circuit must be text');
  if (typeof circuit === 'string' && circuit.length > 100) problems.push('circuit must have at most 100 characters');
  if (problems.length > 0) return { line, ...(code ? { code } : {}), message: problems.join('; ') };
  return { line, code, address, neighborhood, latitude, longitude, active, device, ...(circuit !== undefined ? { circuit } : {}) };
}

async function* readCsv(file: string, onBytes: (n: number) => void): AsyncGenerator<(PoleRecord | RowError)[]> {
  // The header decides the delimiter: ';' (spreadsheets with decimal commas) or ','.
  const firstLine = await new Promise<string>((resolve, reject) => {
    const rl = createInterface({ input: createReadStream(file, { encoding: 'utf8', end: 64 * 1024 }) });
    let done = false;
    rl.on('line', (l) => {
      if (!done) {
        done = true;
        resolve(l);
        rl.close();
      }
    });
    rl.on('close', () => !done && resolve(''));
    rl.on('error', reject);
  });
  const delimiter = firstLine.includes(';') && !firstLine.includes(',') ? ';' : ',';
  const decimalComma = delimiter === ';';
  let columns: string[] | null = null;
  // Position of each known column in a record (-1: the file has no such column).
  let at: Record<(typeof CSV_COLUMNS)[number], number> | null = null;
  const field = (rec: CsvRecord, i: number): string | undefined => (i < 0 ? undefined : rec.fields[i]);
  try {
    for await (const records of csvRecords(file, delimiter, onBytes)) {
      const rows: (PoleRecord | RowError)[] = [];
      for (const rec of records) {
        if (columns === null || at === null) {
          columns = rec.fields.map((f) => f.trim().toLowerCase().replace(/^deviceidentifier$/, 'device_identifier'));
          const unknown = columns.filter((c) => !(CSV_COLUMNS as readonly string[]).includes(c));
          if (unknown.length > 0) throw new UnusableFileError(`unknown column(s) ${unknown.map((c) => `"${c}"`).join(', ')} in the header; expected ${CSV_COLUMNS.join(',')}`);
          const missing = REQUIRED.filter((c) => !columns!.includes(c));
          if (missing.length > 0) throw new UnusableFileError(`the header lacks ${missing.join(', ')}; expected ${CSV_COLUMNS.join(',')}`);
          if (new Set(columns).size !== columns.length) throw new UnusableFileError('the header repeats a column');
          const cols = columns;
          at = Object.fromEntries(CSV_COLUMNS.map((c) => [c, cols.indexOf(c)])) as Record<(typeof CSV_COLUMNS)[number], number>;
          continue;
        }
        if (rec.fields.length === 1 && rec.fields[0]!.trim() === '') continue;
        if (rec.fields.length !== columns.length) {
          rows.push({ line: rec.line, message: `has ${rec.fields.length} field(s); the header has ${columns.length}` });
          continue;
        }
        rows.push(
          checkRow(
            rec.line,
            {
              code: field(rec, at.code),
              address: field(rec, at.address),
              neighborhood: field(rec, at.neighborhood),
              latitude: field(rec, at.latitude),
              longitude: field(rec, at.longitude),
              active: field(rec, at.active),
              device: field(rec, at.device_identifier),
              circuit: field(rec, at.circuit),
            },
            decimalComma,
          ),
        );
      }
      if (rows.length > 0) yield rows;
    }
  } catch (err) {
    throw err instanceof CsvError ? new UnusableFileError(err.message) : err;
  }
  if (columns === null) throw new UnusableFileError('the file is empty (no header)');
}

function featureRow(n: number, f: unknown): PoleRecord | RowError {
  if (!f || typeof f !== 'object' || (f as { type?: unknown }).type !== 'Feature') return { line: n, message: 'is not a GeoJSON Feature' };
  const { geometry, properties } = f as { geometry?: { type?: unknown; coordinates?: unknown }; properties?: Record<string, unknown> | null };
  const p = properties ?? {};
  if (!geometry || geometry.type !== 'Point' || !Array.isArray(geometry.coordinates) || geometry.coordinates.length < 2) {
    return { line: n, ...(typeof p.code === 'string' && p.code.trim() ? { code: p.code.trim() } : {}), message: 'geometry must be a Point with [longitude, latitude]' };
  }
  const [longitude, latitude] = geometry.coordinates as unknown[];
  return checkRow(n, { code: p.code, address: p.address, neighborhood: p.neighborhood, latitude, longitude, active: p.active, device: p.deviceIdentifier ?? p.device_identifier, circuit: p.circuit });
}

async function* readFeatureCollection(file: string, onBytes: (n: number) => void): AsyncGenerator<PoleRecord | RowError> {
  const chunks: Buffer[] = [];
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    onBytes(chunk.length);
    chunks.push(chunk);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(Buffer.concat(chunks).toString('utf8').replace(/^\uFEFF/, ''));
  } catch (err) {
    throw new UnusableFileError(`not valid JSON: ${(err as Error).message}`);
  }
  const features = (doc as { type?: unknown; features?: unknown }).features;
  if ((doc as { type?: unknown }).type === 'Feature') {
    yield featureRow(1, doc);
    return;
  }
  if ((doc as { type?: unknown }).type !== 'FeatureCollection' || !Array.isArray(features)) throw new UnusableFileError('not a GeoJSON FeatureCollection');
  for (let i = 0; i < features.length; i++) yield featureRow(i + 1, features[i]);
}

async function* readFeatureLines(file: string, onBytes: (n: number) => void): AsyncGenerator<PoleRecord | RowError> {
  const input = createReadStream(file);
  input.on('data', (c) => onBytes((c as Buffer).length));
  const rl = createInterface({ input, crlfDelay: Infinity });
  let n = 0;
  for await (const raw of rl) {
    n++;
    const text = raw.replace(/^[\u001e\uFEFF]+/, '').trim();
    if (text === '') continue;
    let f: unknown;
    try {
      f = JSON.parse(text);
    } catch {
      yield { line: n, message: 'is not valid JSON' };
      continue;
    }
    yield featureRow(n, f);
  }
}

/** Rows of a per-row reader, handed on in arrays (one await per array, not per row). */
async function* inBatches<T>(rows: AsyncIterable<T>, size = 5000): AsyncGenerator<T[]> {
  let batch: T[] = [];
  for await (const row of rows) {
    batch.push(row);
    if (batch.length >= size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

/**
 * Every row of the file, checked, in file order, in arrays of consecutive rows (a
 * million rows cost a few hundred awaits, not a million); throws UnusableFileError
 * for a file that cannot be read as a whole.
 */
export async function* readPoleFile(file: string, format: PoleFileFormat, onProgress: (p: Progress) => void = () => {}): AsyncGenerator<(PoleRecord | RowError)[]> {
  let totalBytes: number;
  try {
    totalBytes = (await stat(file)).size;
  } catch (err) {
    throw new UnusableFileError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const progress: Progress = { bytes: 0, totalBytes, rows: 0 };
  const onBytes = (n: number) => {
    progress.bytes += n;
    onProgress(progress);
  };
  const batches = format === 'csv' ? readCsv(file, onBytes) : inBatches(format === 'geojson' ? readFeatureCollection(file, onBytes) : readFeatureLines(file, onBytes));
  for await (const rows of batches) {
    progress.rows += rows.length;
    yield rows;
  }
  onProgress(progress);
}

export const isRowError = (r: PoleRecord | RowError): r is RowError => 'message' in r;
