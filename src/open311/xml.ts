import { XMLBuilder } from 'fast-xml-parser';

/** The element name of one item of each GeoReport v2 list (the list's own element wraps them). */
const ITEM_OF: Readonly<Record<string, string>> = {
  services: 'service',
  service_requests: 'request',
  errors: 'error',
  endpoints: 'endpoint',
  formats: 'format',
  attributes: 'attribute',
  values: 'value',
};

const builder = new XMLBuilder({ format: true, indentBy: '  ', suppressEmptyNode: false, processEntities: true });

/** JSON values in the shape the builder writes: lists wrapped in their element, nulls as empty elements. */
function shape(name: string, value: unknown): unknown {
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) {
    const item = ITEM_OF[name] ?? 'item';
    return { [item]: value.map((v) => shape(item, v)) };
  }
  if (typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shape(k, v)]));
  return String(value);
}

/**
 * A GeoReport v2 answer in XML, built from the same value as its JSON form: `root` is
 * the document element (`services`, `service_requests`, `errors`, `discovery`, ...).
 * The builder escapes every text, so values from requests (descriptions, notes) cannot
 * break the document.
 */
export function toXml(root: string, value: unknown): string {
  // Characters XML 1.0 cannot carry at all (C0 controls other than tab, LF, CR) are dropped.
  const text = builder.build({ [root]: shape(root, value) }) as string;
  return `<?xml version="1.0" encoding="utf-8"?>\n${text.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '')}`;
}
