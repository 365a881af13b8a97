import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hashKey, issueKey, keyMatches, parseKey } from '../../src/lib/api-key.js';
import { negotiateLanguage } from '../../src/lib/i18n.js';
import { openSecret, sealSecret } from '../../src/lib/secret-box.js';
import { normalizeScope, parseScopes } from '../../src/lib/scopes.js';

describe('API keys', () => {
  it('are prefixed tokens whose id finds them and whose hash verifies them', () => {
    const k = issueKey('partner', true);
    expect(k.key).toMatch(/^lmn_live_[A-Za-z0-9]{40}$/);
    expect(k.keyPrefix).toBe(k.key.slice(0, 17));
    expect(parseKey(k.key)).toEqual({ kind: 'partner', keyId: k.keyId });
    expect(keyMatches(k.key, k.hash)).toBe(true);
    expect(keyMatches(k.key.slice(0, -1) + (k.key.endsWith('A') ? 'B' : 'A'), k.hash)).toBe(false);
    expect(hashKey(k.key).equals(k.hash)).toBe(true);
    expect(issueKey('partner', false).key).toMatch(/^lmn_test_/);
    expect(parseKey(issueKey('admin', false).key)?.kind).toBe('admin');
    expect(issueKey('telemetry', true).key).toMatch(/^lmn_tel_[A-Za-z0-9]{40}$/);
    expect(parseKey(issueKey('telemetry', true).key)?.kind).toBe('telemetry');
    expect(parseKey('lmn_live_short')).toBeNull();
  });
});

describe('secret box', () => {
  it('round-trips and refuses another key', () => {
    const key = randomBytes(32);
    const sealed = sealSecret(key, 'webhook-secret-123456');
    expect(sealed).not.toContain('webhook-secret');
    expect(openSecret(key, sealed)).toBe('webhook-secret-123456');
    expect(() => openSecret(randomBytes(32), sealed)).toThrow(/LUMEN_SECRET_KEY/);
  });
});

describe('scopes', () => {
  it('accept camelCase and PascalCase and name unknown ones', () => {
    expect(normalizeScope('CanReadCityData')).toBe('canReadCityData');
    expect(parseScopes('CanCreateServiceOrders, canReadCityData,canReadCityData')).toEqual(['canCreateServiceOrders', 'canReadCityData']);
    expect(() => parseScopes('canFly,canReadCityData')).toThrow(/canFly/);
  });
});

describe('Accept-Language', () => {
  it('defaults to pt-BR and honours q-values', () => {
    expect(negotiateLanguage(undefined)).toBe('pt-BR');
    expect(negotiateLanguage('en')).toBe('en');
    expect(negotiateLanguage('en-US,en;q=0.9')).toBe('en');
    expect(negotiateLanguage('pt-BR;q=0.5, en;q=0.8')).toBe('en');
    expect(negotiateLanguage('fr-FR')).toBe('pt-BR');
    expect(negotiateLanguage('en;q=0')).toBe('pt-BR');
  });
});
