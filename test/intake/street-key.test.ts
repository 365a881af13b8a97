import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { databaseWithClient } from '../support/database-client.js';

/**
 * The pole geocoder's address keys (0003_intake.sql) were rewritten in 0013 to cost
 * less per pole written; pole_street_key_idx kept its entries, so every address must
 * get exactly the key the first definition gave it. That definition is recreated here
 * as session functions and compared with the installed ones.
 */
const FIRST_DEFINITION = `
CREATE FUNCTION pg_temp.text_key_0003(value text) RETURNS text
LANGUAGE sql IMMUTABLE RETURNS NULL ON NULL INPUT AS $$
  SELECT btrim(regexp_replace(regexp_replace(lower(translate(value,
    'ÁÀÂÃÄÅáàâãäåÉÈÊËéèêëÍÌÎÏíìîïÓÒÔÕÖóòôõöÚÙÛÜúùûüÇçÑñºª',
    'AAAAAAaaaaaaEEEEeeeeIIIIiiiiOOOOOoooooUUUUuuuuCcNnoa')),
    '[^a-z0-9]+', ' ', 'g'), '\\s+', ' ', 'g'))
$$;
CREATE FUNCTION pg_temp.street_key_0003(address text) RETURNS text
LANGUAGE sql IMMUTABLE RETURNS NULL ON NULL INPUT AS $$
  SELECT regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(
           regexp_replace(regexp_replace(
             pg_temp.text_key_0003(regexp_replace(split_part(address, ',', 1), '\\s+(n[oº°.]*\\s*)?[0-9]+[a-zA-Z]?\\s*$', '')),
           '^r ', 'rua '),
           '^av ', 'avenida '),
           '^(tv|trav) ', 'travessa '),
           '^al ', 'alameda '),
           '^(pca|pc|pr) ', 'praca '),
           '^(estr|est) ', 'estrada '),
           '^rod ', 'rodovia '),
           '^(lgo|lg) ', 'largo ')
$$;`;

/** Street types and their abbreviations, accents, house numbers, and what users paste. */
const FRAGMENTS = [
  'R.', 'r', 'R', 'Rua', 'RUA', 'AV.', 'Av', 'av', 'Avenida', 'TV', 'Trav.', 'trav', 'Al.', 'AL', 'Pça', 'PÇA', 'pc', 'Pr.', 'pr',
  'Estr.', 'est', 'EST', 'Rod.', 'rod', 'Lgo', 'lg', 'LG.', 'Consolação', 'São', 'JOÃO', 'Ñandú', 'Müller', 'Straße', 'ø', 'Ærø',
  '🙂', '日本', 'İstanbul', 'ǅ', 'ﬁ', 'Ⅻ', 'Augusta', "d'Ávila", '13 de Maio', '7', '1500', '1500A', '12b', 'nº', 'Nº', 'n°', 'no.',
  'N.', 'nº12', 'S/N', 's/n', 'km 12', '-', '.', '/', '"', '(', 'º', 'ª', '°', 'ÀÉÎÕÜ', 'àéîõü', 'ÇÑ', 'ÿ', 'Ÿ', 'ß', 'e\u0301',
  'A\u0300', '\u00a0', '\u200b', '\u3000', 'ſ', 'K', 'Å',
];
const SEPARATORS = [' ', '  ', ',', ', ', ' ,', '\t', '\n', '\r\n', '', '.', ' - ', ';', '\u00a0', ' , '];

/** Hand-picked: each street type, numbers with and without a comma, blanks, a bare type. */
const CASES = [
  'Rua Augusta, 1500', 'rua augusta 1500', 'R. Augusta 1500A', 'AV. PAULISTA, S/N', 'Av Paulista 1578', 'Trav. X nº 12', 'tv da paz, 3',
  'Al. Santos, 10', 'Pça da Sé nº12', 'PC. da Liberdade 5', 'Pr. XV', 'Estr. Velha 3 ', 'est de ferro', 'Rod. Anhanguera km 12',
  'Lgo do Arouche', 'lg são bento 1', '12', 'nº 12', 'Rua 25 de Março 300', '\tAl.\nSantos, 10', '', ' ', ',', 'r', 'r ', ' r x',
  'R. ', 'av,', 'Avenida', 'Rua "Dona" Veridiana, 7', 'RUA DA CONSOLAÇÃO, 2000', 'Rua Ñandú 5b ',
];

const t = databaseWithClient((client) => client.query(FIRST_DEFINITION));

async function differences(addresses: (string | null)[]): Promise<{ address: string | null; first: string | null; now: string | null }[]> {
  const { rows } = await t.client.query(
    `SELECT a AS address, pg_temp.street_key_0003(a) AS first, lumen_street_key(a) AS now
       FROM unnest($1::text[]) a
      WHERE pg_temp.street_key_0003(a) IS DISTINCT FROM lumen_street_key(a)
         OR pg_temp.text_key_0003(a) IS DISTINCT FROM lumen_text_key(a)`,
    [addresses],
  );
  return rows;
}

describe('address keys of the pole geocoder (0013 against 0003)', () => {
  it('gives every hand-picked address the key it had', async () => {
    expect(await differences([...CASES, null])).toEqual([]);
    const { rows } = await t.client.query(`SELECT lumen_street_key(a) AS k FROM unnest($1::text[]) a`, [['R. Augusta, 1500', 'AV. PAULISTA, S/N', 'Pça da Sé nº12', ' r x', 'r']]);
    expect(rows.map((r) => r.k)).toEqual(['rua augusta', 'avenida paulista', 'praca da se', 'rua x', 'r']);
  });

  it('gives 20,000 generated odd addresses the key they had', async () => {
    const address = fc
      .array(fc.tuple(fc.constantFrom(...FRAGMENTS), fc.constantFrom(...SEPARATORS)), { minLength: 1, maxLength: 7 })
      .map((parts) => parts.map(([f, s]) => f + s).join(''));
    const sample = fc.sample(address, { numRuns: 20_000, seed: 13 });
    expect(await differences(sample)).toEqual([]);
  });
});
