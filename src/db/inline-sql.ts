import pg from 'pg';

/**
 * A compiled query with its parameters written into the text as literals, for the one
 * statement that takes no parameters and is worth it: `COPY (SELECT …) TO STDOUT`. Only
 * the value types the export queries bind are accepted (text, numbers, booleans, dates,
 * null); text goes through node-postgres's escapeLiteral, so no value can end the
 * literal. Anything else is a programming error, not a value to guess at.
 */
export function inlineParameters(sqlText: string, parameters: readonly unknown[]): string {
  return sqlText.replace(/\$(\d+)/g, (_m, n: string) => literal(parameters[Number(n) - 1]));
}

function literal(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'string') return pg.escapeLiteral(v);
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new Error(`cannot inline the number ${v}`);
    return String(v);
  }
  if (typeof v === 'boolean') return v ? 'TRUE' : 'FALSE';
  if (v instanceof Date) return `${pg.escapeLiteral(v.toISOString())}::timestamptz`;
  throw new Error(`cannot inline a parameter of type ${typeof v}`);
}
