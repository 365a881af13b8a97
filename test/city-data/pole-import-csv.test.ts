import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { csvRecords, type CsvReading, type CsvRecord } from '../../src/services/city-data/pole-import/csv.js';

/**
 * The CSV reader of `lumen pole import` reads most records whole and the rest one
 * character at a time. Both must give the same records, line numbers and errors,
 * wherever the file's chunks happen to end (tiny chunks here put a chunk end
 * everywhere: inside quotes, between "" and between \r and \n).
 */
const dir = mkdtempSync(path.join(os.tmpdir(), 'lumen-csv-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
async function read(text: string, delimiter: string, reading: CsvReading): Promise<CsvRecord[] | { error: string }> {
  const file = path.join(dir, `f${++files}.csv`);
  writeFileSync(file, text);
  const out: CsvRecord[] = [];
  try {
    for await (const records of csvRecords(file, delimiter, () => {}, reading)) out.push(...records);
  } catch (err) {
    return { error: (err as Error).message };
  }
  return out;
}

/** One character at a time over the whole file: the reference. */
const reference = (text: string, delimiter: string) => read(text, delimiter, { wholeRecords: false });

const TOKENS = ['a', 'bc', 'ç', '🙂', ',', ';', '"', '""', '\n', '\r', '\r\n', ' ', '1.5', '\uFEFF'];

describe('pole import CSV records', () => {
  it('reads quoted fields, escaped quotes, line breaks inside quotes and CRLF as RFC 4180 says', async () => {
    const text = 'code,address\r\nA,"Rua ""X"", 1"\r\n"B","two\nlines"\nC,plain\rD,"x"y,z\n,\n';
    const records = await read(text, ',', {});
    expect(records).toEqual([
      { line: 1, fields: ['code', 'address'] },
      { line: 2, fields: ['A', 'Rua "X", 1'] },
      { line: 3, fields: ['B', 'two\nlines'] },
      { line: 5, fields: ['C', 'plain'] },
      { line: 6, fields: ['D', 'xy', 'z'] },
      { line: 7, fields: ['', ''] },
    ]);
    expect(await reference(text, ',')).toEqual(records);
  });

  it('gives the records of the character reader on any text, with any chunk size', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...TOKENS), { maxLength: 120 }).map((t) => t.join('')),
        fc.constantFrom(',', ';'),
        fc.integer({ min: 1, max: 24 }),
        async (text, delimiter, chunkBytes) => {
          expect(await read(text, delimiter, { chunkBytes })).toEqual(await reference(text, delimiter));
        },
      ),
      { numRuns: 400, seed: 13 },
    );
  });
});
