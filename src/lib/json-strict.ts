/**
 * What JSON.parse lets through silently and Lumen's contracts refuse: a property named
 * twice in one object (JSON.parse keeps the last; RFC 8259 leaves it to the reader, and
 * a partner's two values would be read differently by different readers) and strings
 * that are not Unicode (a lone UTF-16 surrogate, `"\ud800"`, which PostgreSQL would
 * store as U+FFFD while the answer echoed it back as sent).
 */

/** RFC 6901 pointer of a path of keys and indexes. */
export function pointerOf(path: readonly (string | number)[]): string {
  return path.map((p) => `/${String(p).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}

interface Frame {
  readonly object: boolean;
  /** The object's keys so far (objects only). */
  readonly keys: Set<string> | null;
  /** Index of the next element (arrays), or the key whose value is being read (objects). */
  at: string | number;
}

/**
 * The pointer of the first property that repeats a key of its own object, or null.
 * Runs only over text JSON.parse has accepted, so it need not report syntax errors; it
 * skips over string contents with indexOf, so a body of large base64 strings costs
 * little more than its count of structural characters.
 */
export function firstDuplicateKey(text: string): string | null {
  const stack: Frame[] = [];
  let expectKey = false;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      const end = stringEnd(text, i);
      if (expectKey) {
        const top = stack[stack.length - 1]!;
        const raw = text.slice(i + 1, end);
        const key = raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
        if (top.keys!.has(key)) return pointerOf([...stack.slice(0, -1).map((f) => f.at), key]);
        top.keys!.add(key);
        top.at = key;
        expectKey = false;
      }
      i = end + 1;
      continue;
    }
    if (c === 0x7b /* { */) {
      stack.push({ object: true, keys: new Set(), at: '' });
      expectKey = true;
    } else if (c === 0x5b /* [ */) {
      stack.push({ object: false, keys: null, at: 0 });
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
      expectKey = false;
    } else if (c === 0x2c /* , */) {
      const top = stack[stack.length - 1];
      if (top?.object) expectKey = true;
      else if (top) top.at = (top.at as number) + 1;
    }
    i += 1;
  }
  return null;
}

/** Index of the quote that closes the string opening at `start`. */
function stringEnd(text: string, start: number): number {
  let j = text.indexOf('"', start + 1);
  for (;;) {
    if (j < 0) return text.length;
    let backslashes = 0;
    for (let k = j - 1; text.charCodeAt(k) === 0x5c; k -= 1) backslashes += 1;
    if (backslashes % 2 === 0) return j;
    j = text.indexOf('"', j + 1);
  }
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** True when the string holds a UTF-16 surrogate without its pair (not a Unicode string). */
export function hasLoneSurrogate(s: string): boolean {
  return LONE_SURROGATE.test(s);
}

/** Decimal integers only: no sign but a leading minus, no spaces, exponents, hex or fractions. */
export const DECIMAL_INTEGER = /^-?[0-9]+$/;

/** A decimal number as a coordinate is written: digits with an optional fraction, no exponent or hex. */
export const DECIMAL_NUMBER = /^-?[0-9]+(\.[0-9]+)?$/;
