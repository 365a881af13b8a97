import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { firstDuplicateKey, hasLoneSurrogate } from '../../src/lib/json-strict.js';

describe('firstDuplicateKey', () => {
  it('finds nothing in any JSON.stringify output (keys there are unique by construction)', () => {
    fc.assert(fc.property(fc.jsonValue(), (v) => firstDuplicateKey(JSON.stringify(v)) === null && firstDuplicateKey(JSON.stringify(v, null, 2)) === null), { numRuns: 2000 });
  });

  it('points at a key repeated at any depth, after any strings holding quotes, braces and escapes', () => {
    expect(firstDuplicateKey('{"a":1,"a":2}')).toBe('/a');
    expect(firstDuplicateKey('{"x":[{"b":"}\\"{","c":1},{"k":1, "k" :2}]}')).toBe('/x/1/k');
    expect(firstDuplicateKey('{"a\\u0062":1,"ab":2}')).toBe('/ab');
    expect(firstDuplicateKey('{"a/b":{"~":1,"~":2}}')).toBe('/a~1b/~0');
    expect(firstDuplicateKey('{"a":{"b":1},"b":{"a":1}}')).toBeNull();
    expect(firstDuplicateKey('[{"a":1},{"a":1}]')).toBeNull();
    expect(firstDuplicateKey('{"s":"\\\\","s2":"\\\\\\"","s":3}')).toBe('/s');
  });

  it('finds a key repeated anywhere in generated objects', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue(), { minKeys: 1 }), fc.jsonValue(), (obj, extra) => {
        const text = JSON.stringify(obj);
        const key = Object.keys(obj)[0]!;
        const doubled = `{${JSON.stringify(key)}:${JSON.stringify(extra)},${text.slice(1)}`;
        return firstDuplicateKey(`{"wrap":${doubled}}`) === `/wrap/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
      }),
      { numRuns: 1000 },
    );
  });
});

describe('hasLoneSurrogate', () => {
  it('tells a lone surrogate from a pair', () => {
    expect(hasLoneSurrogate('a\ud800b')).toBe(true);
    expect(hasLoneSurrogate('\udc00')).toBe(true);
    expect(hasLoneSurrogate('x\ud83d')).toBe(true);
    expect(hasLoneSurrogate('💡 poste')).toBe(false);
    expect(hasLoneSurrogate('plain')).toBe(false);
  });
});
