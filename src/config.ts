import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';

/**
 * The only reader of process.env. Every variable is validated at once, and every
 * bad one is named in a single error, so an operator fixes a deployment in one go.
 */
export interface Config {
  /** Postgres URL; null means "run on the embedded database under dataDir". */
  readonly databaseUrl: string | null;
  /** HTTP port. Default 8080. */
  readonly port: number;
  /** Interface to bind. Default 0.0.0.0. */
  readonly host: string;
  /** Shown by /api/external/health. Default "development". */
  readonly environment: string;
  readonly isProduction: boolean;
  /** Embedded database and local blobs. Default ./lumen-data. */
  readonly dataDir: string;
  /** 32-byte key that encrypts stored secrets (webhook secrets, partner polling keys). */
  readonly secretKey: Buffer;
  /** Where the secret key came from, for the start-up log. */
  readonly secretKeySource: 'env' | 'data-dir';
  /** pino level. Default "info". */
  readonly logLevel: string;
  /** Test and development only: allow http:// and loopback targets for outbound calls. Default false. */
  readonly allowLoopback: boolean;
  /** Largest accepted request body in bytes. Default 40 MiB. */
  readonly bodyLimitBytes: number;
  /** Validate every response against the OpenAPI document (default: on outside production). */
  readonly validateResponses: boolean;
  /** Requests per minute per partner key when the partner has no limit of its own. Default 6000. */
  readonly rateLimitPerMinute: number;
  /** Seconds to drain in-flight requests on SIGTERM. Default 10. */
  readonly shutdownGraceSeconds: number;
  /** Optional TLS termination: certificate and key files (PEM). */
  readonly tls: { readonly certFile: string; readonly keyFile: string } | null;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function parseBool(name: string, raw: string | undefined, fallback: boolean, problems: string[]): boolean {
  if (raw === undefined || raw === '') return fallback;
  const v = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  problems.push(`${name} must be true or false (got "${raw}")`);
  return fallback;
}

function parseInteger(name: string, raw: string | undefined, fallback: number, min: number, max: number, problems: string[]): number {
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) {
    problems.push(`${name} must be a whole number from ${min} to ${max} (got "${raw}")`);
    return fallback;
  }
  const n = Number(raw.trim());
  if (n < min || n > max) problems.push(`${name} must be from ${min} to ${max} (got ${n})`);
  return n;
}

const SIZE_UNITS: Record<string, number> = { '': 1, b: 1, kb: 1024, k: 1024, kib: 1024, mb: 1024 ** 2, m: 1024 ** 2, mib: 1024 ** 2 };

/** "40MiB", "512kb", "1048576" -> bytes. */
export function parseByteSize(raw: string): number | null {
  const m = /^\s*(\d+)\s*([a-z]*)\s*$/i.exec(raw);
  if (!m) return null;
  const unit = SIZE_UNITS[(m[2] ?? '').toLowerCase()];
  return unit === undefined ? null : Number(m[1]) * unit;
}

function parseSecretKey(raw: string): Buffer | null {
  const s = raw.trim();
  if (/^[0-9a-f]{64}$/i.test(s)) return Buffer.from(s, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(s)) {
    const b = Buffer.from(s.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    return b.length === 32 ? b : null;
  }
  return null;
}

/**
 * Outside production a missing LUMEN_SECRET_KEY is generated once and kept in the
 * data directory, so a newcomer needs no setup and secrets survive restarts.
 */
function dataDirSecretKey(dataDir: string): Buffer {
  const file = path.join(dataDir, 'secret.key');
  if (existsSync(file)) {
    const key = parseSecretKey(readFileSync(file, 'utf8'));
    if (key) return key;
    throw new ConfigError([`${file} does not hold a 32-byte key (64 hex characters)`]);
  }
  mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32);
  writeFileSync(file, key.toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
  return key;
}

export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const environment = (env.LUMEN_ENVIRONMENT ?? '').trim() || 'development';
  if (!/^[A-Za-z0-9._-]{1,40}$/.test(environment)) problems.push(`LUMEN_ENVIRONMENT must be 1-40 letters, digits, ".", "_" or "-" (got "${environment}")`);
  const isProduction = environment === 'production';

  const rawUrl = (env.DATABASE_URL ?? '').trim();
  let databaseUrl: string | null = null;
  if (rawUrl !== '') {
    try {
      const u = new URL(rawUrl);
      if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:') problems.push(`DATABASE_URL must be a postgres:// URL (got protocol "${u.protocol}")`);
      databaseUrl = rawUrl;
    } catch {
      problems.push('DATABASE_URL is not a valid URL');
    }
  }

  const port = parseInteger('PORT', env.PORT, 8080, 0, 65535, problems);
  const host = (env.HOST ?? '').trim() || '0.0.0.0';
  const dataDir = path.resolve((env.LUMEN_DATA_DIR ?? '').trim() || './lumen-data');
  const logLevel = (env.LUMEN_LOG_LEVEL ?? '').trim().toLowerCase() || 'info';
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`LUMEN_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${logLevel}")`);

  const allowLoopback = parseBool('LUMEN_ALLOW_LOOPBACK', env.LUMEN_ALLOW_LOOPBACK, false, problems);
  if (allowLoopback && isProduction) problems.push('LUMEN_ALLOW_LOOPBACK is refused when LUMEN_ENVIRONMENT=production');

  let bodyLimitBytes = 40 * 1024 * 1024;
  if (env.LUMEN_BODY_LIMIT !== undefined && env.LUMEN_BODY_LIMIT !== '') {
    const n = parseByteSize(env.LUMEN_BODY_LIMIT);
    if (n === null || n < 1024) problems.push(`LUMEN_BODY_LIMIT must be a size of at least 1kb, such as 40MiB (got "${env.LUMEN_BODY_LIMIT}")`);
    else bodyLimitBytes = n;
  }
  const validateResponses = parseBool('LUMEN_VALIDATE_RESPONSES', env.LUMEN_VALIDATE_RESPONSES, !isProduction, problems);
  const rateLimitPerMinute = parseInteger('LUMEN_RATE_LIMIT_PER_MINUTE', env.LUMEN_RATE_LIMIT_PER_MINUTE, 6000, 1, 10_000_000, problems);
  const shutdownGraceSeconds = parseInteger('LUMEN_SHUTDOWN_GRACE_SECONDS', env.LUMEN_SHUTDOWN_GRACE_SECONDS, 10, 0, 600, problems);

  const certFile = (env.LUMEN_TLS_CERT_FILE ?? '').trim();
  const keyFile = (env.LUMEN_TLS_KEY_FILE ?? '').trim();
  if ((certFile === '') !== (keyFile === '')) problems.push('LUMEN_TLS_CERT_FILE and LUMEN_TLS_KEY_FILE must be set together');
  for (const [name, file] of [['LUMEN_TLS_CERT_FILE', certFile], ['LUMEN_TLS_KEY_FILE', keyFile]] as const) {
    if (file !== '' && !existsSync(file)) problems.push(`${name}: file ${file} does not exist`);
  }

  let secretKey: Buffer | null = null;
  let secretKeySource: Config['secretKeySource'] = 'env';
  const rawSecret = (env.LUMEN_SECRET_KEY ?? '').trim();
  if (rawSecret !== '') {
    secretKey = parseSecretKey(rawSecret);
    if (!secretKey) problems.push('LUMEN_SECRET_KEY must be 32 bytes as 64 hex characters or base64 (generate one with: openssl rand -hex 32)');
  } else if (isProduction) {
    problems.push('LUMEN_SECRET_KEY is required when LUMEN_ENVIRONMENT=production (generate one with: openssl rand -hex 32)');
  }

  if (problems.length > 0) throw new ConfigError(problems);
  if (!secretKey) {
    secretKey = dataDirSecretKey(dataDir);
    secretKeySource = 'data-dir';
  }

  return Object.freeze({
    databaseUrl,
    port,
    host,
    environment,
    isProduction,
    dataDir,
    secretKey,
    secretKeySource,
    logLevel,
    allowLoopback,
    bodyLimitBytes,
    validateResponses,
    rateLimitPerMinute,
    shutdownGraceSeconds,
    tls: certFile ? Object.freeze({ certFile, keyFile }) : null,
  });
}
