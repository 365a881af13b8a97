import type { Scope } from '../db/tables/foundation.js';

export const SCOPES: readonly Scope[] = ['canCreateServiceOrders', 'canCreateAlerts', 'canReadCityData', 'canManageIntegration'];

/** Canonical camelCase scope for a camelCase or PascalCase name (N3); null when unknown. */
export function normalizeScope(name: string): Scope | null {
  const trimmed = name.trim();
  const camel = trimmed.charAt(0).toLowerCase() + trimmed.slice(1);
  return (SCOPES as readonly string[]).includes(camel) ? (camel as Scope) : null;
}

/** "a,b" or ["a","b"] -> canonical scopes, de-duplicated; throws naming the unknown ones. */
export function parseScopes(input: string | readonly string[]): Scope[] {
  const names = (typeof input === 'string' ? input.split(',') : input).map((s) => s.trim()).filter(Boolean);
  const unknown = names.filter((n) => normalizeScope(n) === null);
  if (unknown.length > 0) throw new Error(`unknown scope(s): ${unknown.join(', ')} (known: ${SCOPES.join(', ')})`);
  return [...new Set(names.map((n) => normalizeScope(n)!))];
}
