/**
 * Spectral with the OWASP API Security ruleset (openapi/spectral.yaml) over every
 * contract: prints errors and warnings per document and fails when any document has an
 * error. `--json` prints the figures as one JSON object instead.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';

const ROOT = process.cwd();
const DOCUMENTS = ['partner', 'partner-polling', 'telemetry', 'sandbox', 'admin'];
const SEVERITY = ['error', 'warning', 'info', 'hint'] as const;

interface Finding {
  code: string;
  severity: number;
  message: string;
  source?: string;
  range: { start: { line: number } };
}

function lint(name: string): Finding[] {
  const args = ['lint', '--ruleset', 'openapi/spectral.yaml', '--format', 'json', '--quiet', '--fail-severity', 'error', path.join('openapi', `${name}.yaml`)];
  try {
    return JSON.parse(execFileSync(path.join(ROOT, 'node_modules/.bin/spectral'), args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })) as Finding[];
  } catch (err) {
    // Spectral exits 1 when it found errors; its findings are still on stdout.
    const out = (err as { stdout?: string }).stdout;
    if (!out) throw err;
    return JSON.parse(out) as Finding[];
  }
}

const figures: Record<string, { errors: number; warnings: number }> = {};
const errors: string[] = [];
for (const name of DOCUMENTS) {
  const found = lint(name);
  figures[name] = { errors: found.filter((f) => f.severity === 0).length, warnings: found.filter((f) => f.severity === 1).length };
  for (const f of found.filter((x) => x.severity === 0)) errors.push(`  ${path.relative(ROOT, f.source ?? name)}:${f.range.start.line + 1} ${SEVERITY[f.severity]} ${f.code}: ${f.message}`);
}
if (process.argv.includes('--json')) {
  process.stdout.write(`${JSON.stringify(figures)}\n`);
} else {
  process.stdout.write('Spectral OWASP (openapi/spectral.yaml)\n');
  for (const [name, f] of Object.entries(figures)) process.stdout.write(`  ${`${name}.yaml`.padEnd(22)} ${String(f.errors).padStart(3)} errors ${String(f.warnings).padStart(4)} warnings\n`);
  if (errors.length > 0) process.stdout.write(`\n${errors.join('\n')}\n`);
}
process.exit(errors.length > 0 ? 1 : 0);
