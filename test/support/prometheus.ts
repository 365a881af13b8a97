/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4), enough
 * for tests to look series up by name and labels. Every sample line must parse and
 * belong to a family announced by # TYPE, so a malformed exposition fails the test.
 */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface Exposition {
  readonly types: ReadonlyMap<string, string>;
  readonly samples: readonly Sample[];
  /** The value of the one sample with this name and (at least) these labels; undefined if none. */
  value(name: string, labels?: Record<string, string>): number | undefined;
  /** Every sample of this name. */
  all(name: string): Sample[];
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?$/;
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(,|$)/y;

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const at = LABEL.lastIndex;
    const m = LABEL.exec(text);
    if (!m) throw new Error(`bad labels at ${at} in: ${line}`);
    labels[m[1]!] = m[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    if (m[3] === '') break;
  }
  return labels;
}

function parseValue(raw: string, line: string): number {
  // Go's ParseFloat, which Prometheus reads with, takes these in any case (prom-client writes "Nan").
  const word = raw.toLowerCase();
  if (word === '+inf' || word === 'inf') return Infinity;
  if (word === '-inf') return -Infinity;
  if (word === 'nan') return NaN;
  const n = Number(raw);
  if (Number.isNaN(n)) throw new Error(`bad value in: ${line}`);
  return n;
}

function familyOf(name: string, types: ReadonlyMap<string, string>): string | undefined {
  if (types.has(name)) return name;
  for (const suffix of ['_bucket', '_sum', '_count', '_total', '_created']) {
    if (name.endsWith(suffix) && types.has(name.slice(0, -suffix.length))) return name.slice(0, -suffix.length);
  }
  return undefined;
}

export function parseExposition(text: string): Exposition {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const m = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
      if (m) types.set(m[1]!, m[2]!);
      else if (!/^# HELP \S+/.test(line)) throw new Error(`bad comment line: ${line}`);
      continue;
    }
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`bad sample line: ${line}`);
    const name = m[1]!;
    if (!familyOf(name, types)) throw new Error(`sample of a family without # TYPE: ${line}`);
    samples.push({ name, labels: m[2] ? parseLabels(m[2], line) : {}, value: parseValue(m[3]!, line) });
  }
  const matches = (s: Sample, labels: Record<string, string>) => Object.entries(labels).every(([k, v]) => s.labels[k] === v);
  return {
    types,
    samples,
    value(name, labels = {}) {
      const found = samples.filter((s) => s.name === name && matches(s, labels));
      if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
      return found[0]?.value;
    },
    all: (name) => samples.filter((s) => s.name === name),
  };
}
