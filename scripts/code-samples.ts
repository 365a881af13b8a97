/**
 * curl samples (x-codeSamples) for the admin document's operations, added to its bundle
 * at generate time: the samples follow the paths, methods, parameters' examples and
 * request examples the YAML already carries, so they cannot drift from it, and the YAML
 * stays hand-written. An operation that has its own samples in the YAML keeps them.
 */
type Json = Record<string, unknown>;

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

function exampleOf(media: Json | undefined): unknown {
  if (!media) return undefined;
  if (media.example !== undefined) return media.example;
  const first = Object.values((media.examples as Record<string, Json> | undefined) ?? {})[0];
  return first?.value;
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

function resolve(document: Json, value: Json): Json {
  const ref = value.$ref;
  if (typeof ref !== 'string' || !ref.startsWith('#/')) return value;
  return ref.slice(2).split('/').reduce<Json>((at, key) => at[key.replace(/~1/g, '/').replace(/~0/g, '~')] as Json, document);
}

/** One curl call per operation, with the admin token from $LUMEN_ADMIN_TOKEN where one is needed. */
export function addAdminCurlSamples(document: Json): void {
  for (const [route, item] of Object.entries(document.paths as Record<string, Json>)) {
    for (const method of METHODS) {
      const operation = item[method] as Json | undefined;
      if (!operation || operation['x-codeSamples']) continue;
      const parameters = [...((item.parameters as Json[]) ?? []), ...((operation.parameters as Json[]) ?? [])].map((p) => resolve(document, p));
      const url = route.replace(/\{([^}]+)\}/g, (_, name: string) => {
        const parameter = parameters.find((p) => p.in === 'path' && p.name === name);
        const example = parameter?.example ?? ((parameter?.schema as Json | undefined)?.examples as unknown[] | undefined)?.[0];
        return example === undefined ? `{${name}}` : encodeURIComponent(String(example));
      });
      const lines = [`curl -sS${method === 'get' ? '' : ` -X ${method.toUpperCase()}`} "$LUMEN_URL${url}"`];
      // Operations open to anyone (the console's sign-in) take no token.
      const open = Array.isArray(operation.security) && operation.security.length === 0;
      if (!open) lines.push('-H "Authorization: Bearer $LUMEN_ADMIN_TOKEN"');
      const body = operation.requestBody ? resolve(document, operation.requestBody as Json) : undefined;
      const json = (body?.content as Record<string, Json> | undefined)?.['application/json'];
      if (json) {
        const example = exampleOf(json);
        lines.push('-H "Content-Type: application/json"', example === undefined ? '-d @body.json' : `-d ${shellQuote(JSON.stringify(example))}`);
      }
      operation['x-codeSamples'] = [{ lang: 'Shell', label: 'curl', source: `${lines.join(' \\\n  ')}\n` }];
    }
  }
}
