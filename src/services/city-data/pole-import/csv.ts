import { createReadStream } from 'node:fs';

/**
 * Records of a CSV file (RFC 4180, with the lenient reading of stray quotes that
 * `lumen pole import` has always had), for city-data/pole-import/parse.ts.
 */

/** The file is not CSV at all (a quoted field never closes). */
export class CsvError extends Error {}

export interface CsvRecord {
  readonly line: number;
  readonly fields: string[];
}

export interface CsvReading {
  /** Bytes read from the file at a time (and so records yielded together). Default 1 MiB, about 10,000 rows. */
  chunkBytes?: number;
  /** Read simple records whole (wholeRecord). Default true; false reads every character one by one. */
  wholeRecords?: boolean;
}

/**
 * RFC 4180 records with the line each starts on, a chunk of the file's worth at a
 * time. Quoted fields may span lines. Most records are read whole by wholeRecord;
 * any other goes through the character by character reader below, which gives the
 * same records (test/city-data/pole-import-csv.test.ts compares both on odd input).
 */
export async function* csvRecords(file: string, delimiter: string, onBytes: (n: number) => void = () => {}, reading: CsvReading = {}): AsyncGenerator<CsvRecord[]> {
  const stream = createReadStream(file, { encoding: 'utf8', highWaterMark: reading.chunkBytes ?? 1 << 20 });
  const whole = reading.wholeRecords ?? true;
  const delimiterCode = delimiter.charCodeAt(0);
  let fields: string[] = [];
  let field = '';
  let quoted = false;
  let afterQuote = false;
  let line = 1;
  let start = 1;
  let first = true;
  let pendingCr = false;
  for await (const chunk of stream as AsyncIterable<string>) {
    onBytes(Buffer.byteLength(chunk));
    let s = chunk;
    if (first) {
      s = s.replace(/^\uFEFF/, '');
      first = false;
    }
    const out: CsvRecord[] = [];
    for (let i = 0; i < s.length; i++) {
      if (whole && !quoted && !afterQuote && !pendingCr && field === '' && fields.length === 0) {
        const record = wholeRecord(s, i, delimiterCode);
        if (record) {
          out.push({ line: start, fields: record.fields });
          line++;
          start = line;
          if (s.charCodeAt(record.end) === CR) pendingCr = true;
          i = record.end;
          continue;
        }
      }
      const ch = s[i]!;
      if (pendingCr) {
        pendingCr = false;
        if (ch === '\n') continue;
      }
      if (quoted) {
        if (ch === '"') {
          if (s[i + 1] === '"') {
            field += '"';
            i++;
          } else if (i + 1 === s.length) {
            // A quote at the end of a chunk: decided by the next chunk's first char.
            quoted = false;
            afterQuote = true;
          } else {
            quoted = false;
            afterQuote = true;
          }
        } else {
          if (ch === '\n') line++;
          field += ch;
        }
        continue;
      }
      if (afterQuote && ch === '"') {
        // The escaped quote split across chunks.
        field += '"';
        quoted = true;
        afterQuote = false;
        continue;
      }
      afterQuote = false;
      if (ch === '"' && field === '') {
        quoted = true;
      } else if (ch === delimiter) {
        fields.push(field);
        field = '';
      } else if (ch === '\n' || ch === '\r') {
        fields.push(field);
        field = '';
        out.push({ line: start, fields });
        fields = [];
        line++;
        start = line;
        if (ch === '\r') pendingCr = true;
      } else {
        field += ch;
      }
    }
    if (out.length > 0) yield out;
  }
  if (quoted) throw new CsvError(`unterminated quoted field in the row starting at line ${start}`);
  if (field !== '' || fields.length > 0) {
    fields.push(field);
    yield [{ line: start, fields }];
  }
}

const QUOTE = 34;
const LF = 10;
const CR = 13;

/**
 * The record starting at `from`, when it lies on one line of this chunk and every
 * quoted field ends right before a delimiter or the line's end: its fields (as the
 * character reader would give them) and the index of the line break ending it.
 * null for anything else (a quoted field with a line break, text after a closing
 * quote, a record the chunk cuts), which the character reader then reads.
 */
function wholeRecord(s: string, from: number, delimiter: number): { fields: string[]; end: number } | null {
  const fields: string[] = [];
  let i = from;
  for (;;) {
    let c: number;
    if (s.charCodeAt(i) === QUOTE) {
      let value = '';
      let j = i + 1;
      for (;;) {
        const q = s.indexOf('"', j);
        if (q < 0) return null;
        const piece = s.slice(j, q);
        // Each \n in a quoted field counts a line: left to the reader.
        if (piece.includes('\n')) return null;
        value += piece;
        if (s.charCodeAt(q + 1) !== QUOTE) {
          i = q + 1;
          break;
        }
        value += '"';
        j = q + 2;
      }
      fields.push(value);
      c = s.charCodeAt(i);
      if (c !== delimiter && c !== LF && c !== CR) return null;
    } else {
      let j = i;
      for (; j < s.length; j++) {
        c = s.charCodeAt(j);
        if (c === delimiter || c === LF || c === CR) break;
      }
      if (j >= s.length) return null;
      fields.push(s.slice(i, j));
      i = j;
      c = s.charCodeAt(i);
    }
    if (c === delimiter) {
      i++;
      continue;
    }
    return { fields, end: i };
  }
}
