import { sql, type RawBuilder, type SqlBool } from 'kysely';

/**
 * The inbox's and the orders list's text search (migration 0091). Each row carries
 * `search_text`: what the row shows, in lumen_search_norm's form (no accents, lower
 * case, letters and digits separated by single spaces), with a pg_trgm GIN index.
 *
 * The query is cut into words here (any run of letters or digits) and each word is
 * normalised by the same SQL function as the rows, so "sao joao", "São João" and
 * "SÃO-JOÃO" are the same search; every word must appear (in any order, as part of
 * a word: "Westphalen, 280" and "westph 280" both find "Rua Comendador Westphalen,
 * 280"). A normalised word holds only letters, digits and spaces: no LIKE escapes.
 * Words of three characters or more are answered by the trigram index; shorter
 * ones only narrow the rows it returns.
 */
export function searchWords(text: string): string[] {
  return text.split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 0).slice(0, 12);
}

/** Every word of the query in `column` (a search_text column). */
export function matchesWords(column: string, words: readonly string[]): RawBuilder<SqlBool> {
  const col = sql.ref(column);
  if (words.length === 0) return sql<SqlBool>`true`;
  return sql<SqlBool>`(${sql.join(
    words.map((w) => sql`${col} LIKE '%' || lumen_search_norm(${w}::text) || '%'`),
    sql` AND `,
  )})`;
}
