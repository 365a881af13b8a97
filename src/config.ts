import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { parseTrustedProxies } from './lib/trusted-proxies.js';

/**
 * The only reader of process.env. Every variable is validated at once, and every
 * bad one is named in a single error, so an operator fixes a deployment in one go.
 */
export interface Config {
  /** Postgres URL; null means "run on the embedded database under dataDir". May point at a PgBouncer in transaction pooling mode. */
  readonly databaseUrl: string | null;
  /**
   * Direct Postgres URL (LUMEN_DIRECT_DATABASE_URL) for what needs a session of its own:
   * migrations (session advisory lock), LISTEN/NOTIFY wake-ups, the job queue's own
   * connections, and CLI commands (pole import keeps a temporary table across
   * transactions). Default: DATABASE_URL.
   */
  readonly directDatabaseUrl: string | null;
  /**
   * A streaming replica of the primary (LUMEN_READ_DATABASE_URL) for partner reads:
   * poles, service orders and the events of a polling page. Default: none, every read
   * on the primary.
   */
  readonly readDatabaseUrl: string | null;
  /**
   * Send statements as named prepared statements (LUMEN_DB_PREPARED, on or off; default
   * on): each distinct statement is parsed and planned once per connection. Turn it off
   * behind a transaction-pooling PgBouncer older than 1.21 (docs/deployment.md).
   */
  readonly dbPrepared: boolean;
  /**
   * Answer partner keys and rate limits in process (LUMEN_PARTNER_KEY_CACHE, on or off;
   * default on; lumen serve only): a key's partner, scopes and settings cached and kept
   * true by LISTEN/NOTIFY, request counts reconciled with the database in batches
   * (docs/rate-limits.md). Off: every request reads and counts in the database.
   */
  readonly partnerKeyCache: boolean;
  /**
   * How far the replica may be behind the primary before reads go to the primary
   * (LUMEN_READ_MAX_LAG, a duration). Default 30 s.
   */
  readonly readMaxLagMs: number;
  /** HTTP port. Default 8080. */
  readonly port: number;
  /**
   * Port of a listener that serves only GET /metrics (LUMEN_METRICS_PORT; 0 picks a free
   * one), on `host`. Default: none, /metrics is served on the main port.
   */
  readonly metricsPort: number | null;
  /** Interface to bind. Default 0.0.0.0. */
  readonly host: string;
  /** Shown by /api/external/health. Default "development". */
  readonly environment: string;
  readonly isProduction: boolean;
  /** Embedded database and local blobs. Default ./lumen-data. */
  readonly dataDir: string;
  /** 32-byte key that encrypts stored secrets (webhook secrets, partner polling keys). */
  readonly secretKey: Buffer;
  /** LUMEN_SECRET_KEY_PREVIOUS: the key before a rotation, still read (never written) until `lumen secrets rewrap`. */
  readonly previousSecretKey: Buffer | null;
  /** Where the secret key came from, for the start-up log. */
  readonly secretKeySource: 'env' | 'data-dir';
  /** pino level. Default "info". */
  readonly logLevel: string;
  /** Test and development only: allow http:// and loopback targets for outbound calls. Default false. */
  readonly allowLoopback: boolean;
  /** Largest accepted request body in bytes. Default 40 MiB. */
  readonly bodyLimitBytes: number;
  /**
   * Longest a client may take to send a request body, from the end of its headers, in ms
   * (LUMEN_BODY_TIMEOUT_MS). A slower body (a stalled or one-byte-a-second client) gets
   * 408 request-timeout and its connection is closed. Default 60000.
   */
  readonly bodyTimeoutMs: number;
  /** Validate every response against the OpenAPI document (default: on outside production). */
  readonly validateResponses: boolean;
  /** Requests per minute per partner key when the partner has no limit of its own. Default 6000. */
  readonly rateLimitPerMinute: number;
  /** Failed authentications per client address and minute before 429 without a lookup (per instance); 0 = no limit. Default 60. */
  readonly authFailuresPerMinute: number;
  /**
   * Failed console sign-ins for one e-mail from one client address in 15 minutes before
   * that pair must wait, the wait doubling with each further failure (progressive delay,
   * never a lockout of the account; LUMEN_SIGN_IN_FAILURES_PER_ACCOUNT). Default 5.
   */
  readonly signInFailuresPerAccount: number;
  /** Failed console sign-ins per client address in 15 minutes before that address must wait, doubling likewise (LUMEN_SIGN_IN_FAILURES_PER_ADDRESS); 0 = no limit. Default 30. */
  readonly signInFailuresPerAddress: number;
  /** Password hashes (scrypt) computed at once, on threads of their own (LUMEN_PASSWORD_HASHES). Default 2. */
  readonly passwordHashes: number;
  /**
   * log2 of scrypt's N for new password hashes (LUMEN_PASSWORD_COST). Default 15 (32 MiB);
   * 16-20 cost more; below 15 (down to 10) only outside production, where a test suite
   * hashes hundreds of passwords. A stored hash keeps its own cost.
   */
  readonly passwordCost: number;
  /**
   * Telemetry batches applied at once by this process (LUMEN_TELEMETRY_BATCHES); one more
   * waits for a place. Default 2: on two cores, four at once took both and a partner's
   * page took 2.4 times as long as with no ingest running; two leave it about as fast,
   * at 0.5 of the bare SQL's rate (bench/FINDINGS.md).
   */
  readonly telemetryBatches: number;
  /** Connections of the DATABASE_URL pool of `lumen serve` (LUMEN_DB_POOL_SIZE), and of the read replica's. Default DEFAULT_DB_POOL_SIZE. */
  readonly dbPoolSize: number;
  /** Reverse proxies whose X-Forwarded-For / Forwarded is believed (LUMEN_TRUSTED_PROXIES, CIDRs). Default none. */
  readonly trustedProxies: readonly string[];
  /** Connections held at once (LUMEN_MAX_CONNECTIONS); default derived from the open-files limit at start. */
  readonly maxConnections: number | null;
  /** Connections held at once from one client address (LUMEN_MAX_CONNECTIONS_PER_ADDRESS); default derived from maxConnections. */
  readonly maxConnectionsPerAddress: number | null;
  /** Percent of each process-wide outbound budget (downloads, outbound connections) one city may hold (LUMEN_TENANT_BUDGET_SHARE). Default 50. */
  readonly tenantBudgetShare: number;
  /** Intake requests (POST /api/external/service-orders) in progress per key and instance before 429. Default 8. */
  readonly intakeConcurrencyPerKey: number;
  /**
   * Request bodies held in memory at once by this process, in bytes (LUMEN_BODY_MEMORY).
   * A body is read only when three times its Content-Length (three times the body limit,
   * when it declares none) fits: its bytes, its text and the parsed value, held until its
   * request ends. A body that does not fit waits (its read timeout starts when it has
   * room). Default 192 MiB.
   */
  readonly bodyMemoryBytes: number;
  /**
   * Attachment content held in memory at once by this process, in bytes
   * (LUMEN_ATTACHMENT_MEMORY): decoded inline photos and downloaded URL bodies, from the
   * decode or the download's start until the blob is written. A URL download counts 5 MiB
   * (the most it may bring) until it ends, then its size. Past it attachments wait.
   * Default 128 MiB.
   */
  readonly attachmentMemoryBytes: number;
  /**
   * Outbound requests in progress at once in this process (LUMEN_OUTBOUND_CONNECTIONS):
   * attachment downloads, geocoding, webhooks and partner polls together; one more waits
   * for a place (its timeout starts when it has one). Default 64.
   */
  readonly outboundConnections: number;
  /** Seconds to drain in-flight requests on SIGTERM. Default 10. */
  readonly shutdownGraceSeconds: number;
  /** How long an operator may undo a triage action or an order's cancellation, its partner events held meanwhile (LUMEN_UNDO_WINDOW_SECONDS). Default 10. */
  readonly undoWindowSeconds: number;
  /** Restarts of a dead embedded PostgreSQL before /livez fails. Default 5. */
  readonly embeddedRestartAttempts: number;
  /** Pause before the first restart, doubled each time. Default 1000 ms. */
  readonly embeddedRestartDelayMs: number;
  /**
   * The origin operators' browsers use to reach Lumen (LUMEN_PUBLIC_URL, e.g.
   * https://lumen.city.example), without path. Console sessions: the cookie is Secure
   * when it is https, and a state-changing request with the cookie must come from it
   * (or from the Host the request names). Default: none.
   */
  readonly publicOrigin: string | null;
  /** Optional TLS termination: certificate and key files (PEM). */
  readonly tls: { readonly certFile: string; readonly keyFile: string } | null;
  /** Nominatim-compatible geocoder base URL (LUMEN_GEOCODER_URL; its /search is called). Default none: only the tenant's poles geocode. */
  readonly geocoderUrl: string | null;
  /** Longest an intake request waits for geocoding, in ms (LUMEN_GEOCODE_BUDGET_MS). Default 2000. */
  readonly geocodeBudgetMs: number;
  /** Timeout of one geocoder call, in ms (LUMEN_GEOCODER_TIMEOUT_MS). Default 5000 (intake also stays within geocodeBudgetMs). */
  readonly geocoderTimeoutMs: number;
  /** First delay of the background geocoding retries, in seconds, doubled per try, capped at 6 h, for about a day (LUMEN_GEOCODE_RETRY_DELAY_SECONDS). Default 60. */
  readonly geocodeRetryDelaySeconds: number;
  /** An order made from an alert with coordinates takes the nearest active pole within this many metres (LUMEN_POLE_MATCH_METERS; 0 turns it off). Default 30. */
  readonly poleMatchMeters: number;
  /** Where attachment copies are kept (LUMEN_BLOB_STORE: an absolute directory, or s3://bucket/prefix). Default: the local directory <dataDir>/blobs. */
  readonly blobStore: BlobStoreConfig;
  /** Attachment URL downloads (3 attempts). */
  readonly attachmentDownload: {
    /** One attempt, connect to last byte, in ms (LUMEN_ATTACHMENT_ATTEMPT_TIMEOUT_MS). Default 10000. */
    readonly attemptTimeoutMs: number;
    /** All attempts of one attachment with their backoff, in ms (LUMEN_ATTACHMENT_TOTAL_TIMEOUT_MS). Default 30000. */
    readonly totalTimeoutMs: number;
    /** Delay before the second attempt, doubled before the third, in ms (LUMEN_ATTACHMENT_RETRY_DELAY_MS). Default 500. */
    readonly retryDelayMs: number;
  };
  /** Days an Idempotency-Key is kept, at least 7 (LUMEN_IDEMPOTENCY_RETENTION_DAYS). Default 7. */
  readonly idempotencyRetentionDays: number;
  /** Partner polling (interface 4.5): one call to a partner's endpoint, connect to last byte, in ms (LUMEN_POLL_TIMEOUT_MS). Default 30000. */
  readonly pollTimeoutMs: number;
  /** Partner polling: largest response read from a partner's endpoint (LUMEN_POLL_MAX_RESPONSE, e.g. 64MiB). Default 64 MiB. */
  readonly pollMaxResponseBytes: number;
  /**
   * Webhooks: delay before each retry of a failed delivery, in ms, jittered by ±20%
   * (LUMEN_WEBHOOK_RETRY_SCHEDULE, a comma list of durations). One attempt plus one per
   * step. Default 5s,5m,30m,2h,5h,10h,10h: 8 attempts in about 28 hours.
   */
  readonly webhookRetryScheduleMs: readonly number[];
  /** Webhooks: one attempt, connect to last byte, in ms (LUMEN_WEBHOOK_TIMEOUT_MS). Default 10000, the contract's 10 s; shorter only outside production. */
  readonly webhookTimeoutMs: number;
  /** How often each instance looks for due webhook deliveries nobody woke it for (retries of other instances, leases of a dead one), in ms. Default 2000. */
  readonly webhookPollMs: number;
  /** Webhook attempts on the wire per partner in each instance (and leased per partner in each instance: sixteen times this); a receiver that never answers holds no more of an instance's attempt slots. Default 8. */
  readonly webhookMaxInFlightPerPartner: number;
  /** Days events are kept for polling and the delivery log, at least 30 (LUMEN_EVENT_RETENTION_DAYS). Default 30. */
  readonly eventRetentionDays: number;
  /**
   * The console's basemap (LUMEN_MAP_TILE_URL): an XYZ tile URL template with {z}, {x}, {y}
   * (and optionally {s}), fetched by the operators' browsers, never by Lumen. Default
   * the public OpenStreetMap tiles, https://tile.openstreetmap.org/{z}/{x}/{y}.png, whose
   * usage policy (https://operations.osmfoundation.org/policies/tiles/) asks for the
   * attribution and forbids heavy use: a city's maintenance centre should point this at
   * its own tile server. `none` turns the basemap off (markers on a plain background).
   */
  readonly mapTileUrl: string | null;
  /** Attribution shown on the map (LUMEN_MAP_TILE_ATTRIBUTION). Default "© OpenStreetMap contributors". */
  readonly mapTileAttribution: string;
  /**
   * The console's "navigate" link on an order (LUMEN_MAPS_URL_TEMPLATE): an http(s) URL
   * with {lat} and {lon}, opened by the crew's phone beside the `geo:` link. Default
   * https://www.openstreetmap.org/directions?to={lat},{lon}; a city using another routing
   * app sets e.g. https://www.google.com/maps/dir/?api=1&destination={lat},{lon}.
   */
  readonly mapsUrlTemplate: string;
}

/** LUMEN_WEBHOOK_MAX_IN_FLIGHT_PER_PARTNER's default: webhook attempts on the wire per partner, across instances. */
export const DEFAULT_WEBHOOK_MAX_IN_FLIGHT_PER_PARTNER = 8;
/**
 * Connections of a serving process's request pool (LUMEN_DB_POOL_SIZE). Few on purpose:
 * each one is a backend that runs at once with the others, and on the 2-core bench
 * machine, where PostgreSQL, Lumen and the clients share the cores, intake at 16
 * connections made 951, 960, 900, 847 and 836 req/s with pools of 4, 6, 8, 10 and 16,
 * its p99 40.2, 37.2, 42.0, 40.8 and 61.3 ms (bench/FINDINGS.md, "Fewer connections").
 * A larger database server takes a larger pool: about twice its cores, over all instances.
 */
export const DEFAULT_DB_POOL_SIZE = 6;
export const DEFAULT_MAP_TILE_URL = 'https://tile.openstreetmap.org/{z}/{x}/{y}.png';
export const DEFAULT_MAPS_URL_TEMPLATE = 'https://www.openstreetmap.org/directions?to={lat},{lon}';

/** The attachment blob store: a local directory, or an S3-compatible bucket (LUMEN_BLOB_STORE=s3://bucket/prefix). */
export type BlobStoreConfig =
  | { readonly kind: 'local'; readonly dir: string }
  | {
      readonly kind: 's3';
      readonly bucket: string;
      /** Key prefix inside the bucket, without leading or trailing slash ('' for none). */
      readonly prefix: string;
      /** LUMEN_S3_ENDPOINT, e.g. https://minio.internal:9000 (path-style requests). Default: AWS, https://<bucket>.s3.<region>.amazonaws.com. */
      readonly endpoint: string | null;
      /** LUMEN_S3_REGION. Default us-east-1. */
      readonly region: string;
      /** LUMEN_S3_ACCESS_KEY_ID and LUMEN_S3_SECRET_ACCESS_KEY (required). */
      readonly accessKeyId: string;
      readonly secretAccessKey: string;
    };

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

function parsePostgresUrl(name: string, raw: string | undefined, problems: string[]): string | null {
  const value = (raw ?? '').trim();
  if (value === '') return null;
  try {
    const u = new URL(value);
    if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:') problems.push(`${name} must be a postgres:// URL (got protocol "${u.protocol}")`);
    return value;
  } catch {
    problems.push(`${name} is not a valid URL`);
    return null;
  }
}

/** A size variable ("256MiB", "512kb", "1048576") of at least `min` bytes. */
function parseSize(name: string, raw: string | undefined, fallback: number, min: number, problems: string[]): number {
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = parseByteSize(raw);
  if (n === null || n < min) {
    problems.push(`${name} must be a size of at least ${min / 1024 / 1024} MiB, such as ${fallback / 1024 / 1024}MiB (got "${raw}")`);
    return fallback;
  }
  return n;
}

/** "40MiB", "512kb", "1048576" -> bytes. */
export function parseByteSize(raw: string): number | null {
  const m = /^\s*(\d+)\s*([a-z]*)\s*$/i.exec(raw);
  if (!m) return null;
  const unit = SIZE_UNITS[(m[2] ?? '').toLowerCase()];
  return unit === undefined ? null : Number(m[1]) * unit;
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "5s", "250ms", "2h" -> milliseconds. */
export function parseDuration(raw: string): number | null {
  const m = /^\s*(\d+)\s*(ms|s|m|h|d)\s*$/i.exec(raw);
  if (!m) return null;
  return Number(m[1]) * DURATION_UNITS[m[2]!.toLowerCase()]!;
}

/** LUMEN_WEBHOOK_RETRY_SCHEDULE: 1 to 20 durations from 1 ms to 24 h, such as 5s,5m,30m,2h. */
function parseRetrySchedule(raw: string | undefined, problems: string[]): number[] {
  const fallback = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];
  if (raw === undefined || raw.trim() === '') return fallback;
  const steps = raw.split(',').map((part) => parseDuration(part));
  if (steps.length > 20 || steps.some((ms) => ms === null || ms < 1 || ms > 86_400_000)) {
    problems.push(`LUMEN_WEBHOOK_RETRY_SCHEDULE must be 1 to 20 comma-separated durations from 1ms to 24h, such as 5s,5m,30m,2h,5h,10h,10h (got "${raw}")`);
    return fallback;
  }
  return steps as number[];
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

/** LUMEN_GEOCODER_URL: an https URL (http only with LUMEN_ALLOW_LOOPBACK), without query or fragment. */
function parseGeocoderUrl(raw: string | undefined, allowLoopback: boolean, problems: string[]): string | null {
  const value = (raw ?? '').trim();
  if (value === '') return null;
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    problems.push(`LUMEN_GEOCODER_URL is not a valid URL (got "${value}")`);
    return null;
  }
  if (u.protocol !== 'https:' && !(allowLoopback && u.protocol === 'http:')) problems.push('LUMEN_GEOCODER_URL must be an https:// URL');
  if (u.search || u.hash) problems.push('LUMEN_GEOCODER_URL must not carry a query or fragment (Lumen calls <url>/search?...)');
  return value.replace(/\/+$/, '');
}

/** LUMEN_BLOB_STORE: unset = <dataDir>/blobs; s3://bucket/prefix with the LUMEN_S3_* variables. */
function parseBlobStore(env: Env, dataDir: string, isProduction: boolean, problems: string[]): BlobStoreConfig {
  const raw = (env.LUMEN_BLOB_STORE ?? '').trim();
  if (raw === '') return Object.freeze({ kind: 'local', dir: path.join(dataDir, 'blobs') });
  const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(raw);
  if (!m) {
    if (/^(file:\/\/|\/)/.test(raw)) return Object.freeze({ kind: 'local', dir: path.resolve(raw.replace(/^file:\/\//, '')) });
    problems.push(`LUMEN_BLOB_STORE must be s3://bucket/prefix or an absolute directory (got "${raw}")`);
    return Object.freeze({ kind: 'local', dir: path.join(dataDir, 'blobs') });
  }
  const endpointRaw = (env.LUMEN_S3_ENDPOINT ?? '').trim();
  let endpoint: string | null = null;
  if (endpointRaw !== '') {
    try {
      const u = new URL(endpointRaw);
      if (u.protocol !== 'https:' && !(u.protocol === 'http:' && !isProduction)) problems.push('LUMEN_S3_ENDPOINT must be an https:// URL (http:// only outside production)');
      endpoint = endpointRaw.replace(/\/+$/, '');
    } catch {
      problems.push(`LUMEN_S3_ENDPOINT is not a valid URL (got "${endpointRaw}")`);
    }
  }
  const accessKeyId = (env.LUMEN_S3_ACCESS_KEY_ID ?? '').trim();
  const secretAccessKey = (env.LUMEN_S3_SECRET_ACCESS_KEY ?? '').trim();
  if (accessKeyId === '' || secretAccessKey === '') problems.push('LUMEN_S3_ACCESS_KEY_ID and LUMEN_S3_SECRET_ACCESS_KEY are required with LUMEN_BLOB_STORE=s3://...');
  const region = (env.LUMEN_S3_REGION ?? '').trim() || 'us-east-1';
  if (!/^[a-z0-9-]{1,40}$/.test(region)) problems.push(`LUMEN_S3_REGION must look like us-east-1 (got "${region}")`);
  return Object.freeze({ kind: 's3', bucket: m[1]!, prefix: (m[2] ?? '').replace(/^\/+|\/+$/g, ''), endpoint, region, accessKeyId, secretAccessKey });
}

export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const environment = (env.LUMEN_ENVIRONMENT ?? '').trim() || 'development';
  if (!/^[A-Za-z0-9._-]{1,40}$/.test(environment)) problems.push(`LUMEN_ENVIRONMENT must be 1-40 letters, digits, ".", "_" or "-" (got "${environment}")`);
  const isProduction = environment === 'production';

  const databaseUrl = parsePostgresUrl('DATABASE_URL', env.DATABASE_URL, problems);
  const directRaw = parsePostgresUrl('LUMEN_DIRECT_DATABASE_URL', env.LUMEN_DIRECT_DATABASE_URL, problems);
  if (directRaw !== null && databaseUrl === null) problems.push('LUMEN_DIRECT_DATABASE_URL needs DATABASE_URL (the embedded database has no pooler in front)');
  const directDatabaseUrl = directRaw ?? databaseUrl;
  const partnerKeyCache = parseBool('LUMEN_PARTNER_KEY_CACHE', env.LUMEN_PARTNER_KEY_CACHE, true, problems);
  const dbPrepared = parseBool('LUMEN_DB_PREPARED', env.LUMEN_DB_PREPARED, true, problems);
  const readDatabaseUrl = parsePostgresUrl('LUMEN_READ_DATABASE_URL', env.LUMEN_READ_DATABASE_URL, problems);
  if (readDatabaseUrl !== null && databaseUrl === null) problems.push('LUMEN_READ_DATABASE_URL needs DATABASE_URL (the embedded database has no replica)');
  let readMaxLagMs = 30_000;
  const readMaxLagRaw = (env.LUMEN_READ_MAX_LAG ?? '').trim();
  if (readMaxLagRaw !== '') {
    const ms = parseDuration(readMaxLagRaw);
    if (ms === null || ms < 100 || ms > 3_600_000) problems.push(`LUMEN_READ_MAX_LAG must be a duration from 100ms to 1h, such as 30s (got "${readMaxLagRaw}")`);
    else readMaxLagMs = ms;
  }
  const embeddedInProduction = parseBool('LUMEN_EMBEDDED_IN_PRODUCTION', env.LUMEN_EMBEDDED_IN_PRODUCTION, false, problems);
  if (isProduction && databaseUrl === null && (env.DATABASE_URL ?? '').trim() === '' && !embeddedInProduction) {
    problems.push('LUMEN_ENVIRONMENT=production needs DATABASE_URL (a PostgreSQL you operate and back up); to run on the embedded database in production anyway, set LUMEN_EMBEDDED_IN_PRODUCTION=true');
  }

  const port = parseInteger('PORT', env.PORT, 8080, 0, 65535, problems);
  const metricsPortRaw = (env.LUMEN_METRICS_PORT ?? '').trim();
  const metricsPort = metricsPortRaw === '' ? null : parseInteger('LUMEN_METRICS_PORT', metricsPortRaw, 0, 0, 65535, problems);
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
  const bodyTimeoutMs = parseInteger('LUMEN_BODY_TIMEOUT_MS', env.LUMEN_BODY_TIMEOUT_MS, 60_000, 100, 600_000, problems);
  const validateResponses = parseBool('LUMEN_VALIDATE_RESPONSES', env.LUMEN_VALIDATE_RESPONSES, !isProduction, problems);
  const rateLimitPerMinute = parseInteger('LUMEN_RATE_LIMIT_PER_MINUTE', env.LUMEN_RATE_LIMIT_PER_MINUTE, 6000, 1, 10_000_000, problems);
  const embeddedRestartAttempts = parseInteger('LUMEN_EMBEDDED_RESTART_ATTEMPTS', env.LUMEN_EMBEDDED_RESTART_ATTEMPTS, 5, 1, 100, problems);
  const embeddedRestartDelayMs = parseInteger('LUMEN_EMBEDDED_RESTART_DELAY_MS', env.LUMEN_EMBEDDED_RESTART_DELAY_MS, 1000, 10, 600_000, problems);
  const intakeConcurrencyPerKey = parseInteger('LUMEN_INTAKE_CONCURRENCY_PER_KEY', env.LUMEN_INTAKE_CONCURRENCY_PER_KEY, 8, 1, 10_000, problems);
  const bodyMemoryBytes = parseSize('LUMEN_BODY_MEMORY', env.LUMEN_BODY_MEMORY, 192 * 1024 * 1024, 1024 * 1024, problems);
  const attachmentMemoryBytes = parseSize('LUMEN_ATTACHMENT_MEMORY', env.LUMEN_ATTACHMENT_MEMORY, 128 * 1024 * 1024, 5 * 1024 * 1024, problems);
  const outboundConnections = parseInteger('LUMEN_OUTBOUND_CONNECTIONS', env.LUMEN_OUTBOUND_CONNECTIONS, 64, 1, 10_000, problems);
  const authFailuresPerMinute = parseInteger('LUMEN_AUTH_FAILURES_PER_MINUTE', env.LUMEN_AUTH_FAILURES_PER_MINUTE, 60, 0, 10_000_000, problems);
  const signInFailuresPerAccount = parseInteger('LUMEN_SIGN_IN_FAILURES_PER_ACCOUNT', env.LUMEN_SIGN_IN_FAILURES_PER_ACCOUNT, 5, 1, 1000, problems);
  const signInFailuresPerAddress = parseInteger('LUMEN_SIGN_IN_FAILURES_PER_ADDRESS', env.LUMEN_SIGN_IN_FAILURES_PER_ADDRESS, 30, 0, 1_000_000, problems);
  const passwordHashes = parseInteger('LUMEN_PASSWORD_HASHES', env.LUMEN_PASSWORD_HASHES, 2, 1, 64, problems);
  const passwordCost = parseInteger('LUMEN_PASSWORD_COST', env.LUMEN_PASSWORD_COST, 15, 10, 20, problems);
  if (isProduction && passwordCost < 15) problems.push('LUMEN_PASSWORD_COST below 15 is refused when LUMEN_ENVIRONMENT=production (a weaker hash of every password set from then on)');
  const telemetryBatches = parseInteger('LUMEN_TELEMETRY_BATCHES', env.LUMEN_TELEMETRY_BATCHES, 2, 1, 64, problems);
  const dbPoolSize = parseInteger('LUMEN_DB_POOL_SIZE', env.LUMEN_DB_POOL_SIZE, DEFAULT_DB_POOL_SIZE, 2, 1000, problems);
  const proxies = parseTrustedProxies(env.LUMEN_TRUSTED_PROXIES);
  if ('problem' in proxies) problems.push(proxies.problem);
  const trustedProxies = 'cidrs' in proxies ? proxies.cidrs : [];
  const maxConnections = env.LUMEN_MAX_CONNECTIONS ? parseInteger('LUMEN_MAX_CONNECTIONS', env.LUMEN_MAX_CONNECTIONS, 0, 16, 10_000_000, problems) : null;
  const maxConnectionsPerAddress = env.LUMEN_MAX_CONNECTIONS_PER_ADDRESS ? parseInteger('LUMEN_MAX_CONNECTIONS_PER_ADDRESS', env.LUMEN_MAX_CONNECTIONS_PER_ADDRESS, 0, 1, 10_000_000, problems) : null;
  const tenantBudgetShare = parseInteger('LUMEN_TENANT_BUDGET_SHARE', env.LUMEN_TENANT_BUDGET_SHARE, 50, 1, 100, problems);
  const undoWindowSeconds = parseInteger('LUMEN_UNDO_WINDOW_SECONDS', env.LUMEN_UNDO_WINDOW_SECONDS, 10, 1, 120, problems);
  const shutdownGraceSeconds = parseInteger('LUMEN_SHUTDOWN_GRACE_SECONDS', env.LUMEN_SHUTDOWN_GRACE_SECONDS, 10, 0, 600, problems);

  let publicOrigin: string | null = null;
  const publicRaw = (env.LUMEN_PUBLIC_URL ?? '').trim();
  if (publicRaw !== '') {
    try {
      const u = new URL(publicRaw);
      if (u.protocol !== 'https:' && u.protocol !== 'http:') problems.push(`LUMEN_PUBLIC_URL must be an http(s) URL (got "${publicRaw}")`);
      else publicOrigin = u.origin;
    } catch {
      problems.push(`LUMEN_PUBLIC_URL is not a valid URL (got "${publicRaw}")`);
    }
  } else if (isProduction) {
    // Absolute URLs (Open311 discovery, media links) and the console's CSRF check come
    // from it: never from the Host header a client sends.
    problems.push('LUMEN_PUBLIC_URL is required in production: the https origin partners and operators reach Lumen at, such as https://lumen.city.example');
  }

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
  let previousSecretKey: Buffer | null = null;
  const rawPrevious = (env.LUMEN_SECRET_KEY_PREVIOUS ?? '').trim();
  if (rawPrevious !== '') {
    previousSecretKey = parseSecretKey(rawPrevious);
    if (!previousSecretKey) problems.push('LUMEN_SECRET_KEY_PREVIOUS must be 32 bytes as 64 hex characters or base64');
  }

  const geocoderUrl = parseGeocoderUrl(env.LUMEN_GEOCODER_URL, allowLoopback, problems);
  const geocodeBudgetMs = parseInteger('LUMEN_GEOCODE_BUDGET_MS', env.LUMEN_GEOCODE_BUDGET_MS, 2000, 50, 60_000, problems);
  const geocoderTimeoutMs = parseInteger('LUMEN_GEOCODER_TIMEOUT_MS', env.LUMEN_GEOCODER_TIMEOUT_MS, 5000, 50, 120_000, problems);
  const geocodeRetryDelaySeconds = parseInteger('LUMEN_GEOCODE_RETRY_DELAY_SECONDS', env.LUMEN_GEOCODE_RETRY_DELAY_SECONDS, 60, 1, 3600, problems);
  const poleMatchMeters = parseInteger('LUMEN_POLE_MATCH_METERS', env.LUMEN_POLE_MATCH_METERS, 30, 0, 1000, problems);
  const blobStore = parseBlobStore(env, dataDir, isProduction, problems);
  const attachmentDownload = Object.freeze({
    attemptTimeoutMs: parseInteger('LUMEN_ATTACHMENT_ATTEMPT_TIMEOUT_MS', env.LUMEN_ATTACHMENT_ATTEMPT_TIMEOUT_MS, 10_000, 100, 120_000, problems),
    totalTimeoutMs: parseInteger('LUMEN_ATTACHMENT_TOTAL_TIMEOUT_MS', env.LUMEN_ATTACHMENT_TOTAL_TIMEOUT_MS, 30_000, 100, 300_000, problems),
    retryDelayMs: parseInteger('LUMEN_ATTACHMENT_RETRY_DELAY_MS', env.LUMEN_ATTACHMENT_RETRY_DELAY_MS, 500, 0, 60_000, problems),
  });
  const idempotencyRetentionDays = parseInteger('LUMEN_IDEMPOTENCY_RETENTION_DAYS', env.LUMEN_IDEMPOTENCY_RETENTION_DAYS, 7, 7, 365, problems);
  const pollTimeoutMs = parseInteger('LUMEN_POLL_TIMEOUT_MS', env.LUMEN_POLL_TIMEOUT_MS, 30_000, 100, 600_000, problems);
  let pollMaxResponseBytes = 64 * 1024 * 1024;
  if (env.LUMEN_POLL_MAX_RESPONSE !== undefined && env.LUMEN_POLL_MAX_RESPONSE !== '') {
    const n = parseByteSize(env.LUMEN_POLL_MAX_RESPONSE);
    if (n === null || n < 1024) problems.push(`LUMEN_POLL_MAX_RESPONSE must be a size of at least 1kb, such as 64MiB (got "${env.LUMEN_POLL_MAX_RESPONSE}")`);
    else pollMaxResponseBytes = n;
  }
  const webhookRetryScheduleMs = Object.freeze(parseRetrySchedule(env.LUMEN_WEBHOOK_RETRY_SCHEDULE, problems));
  const webhookTimeoutMs = parseInteger('LUMEN_WEBHOOK_TIMEOUT_MS', env.LUMEN_WEBHOOK_TIMEOUT_MS, 10_000, 100, 10_000, problems);
  const webhookMaxInFlightPerPartner = parseInteger('LUMEN_WEBHOOK_MAX_IN_FLIGHT_PER_PARTNER', env.LUMEN_WEBHOOK_MAX_IN_FLIGHT_PER_PARTNER, DEFAULT_WEBHOOK_MAX_IN_FLIGHT_PER_PARTNER, 1, 1000, problems);
  const webhookPollMs = parseInteger('LUMEN_WEBHOOK_POLL_MS', env.LUMEN_WEBHOOK_POLL_MS, 2000, 100, 600_000, problems);
  if (isProduction && webhookTimeoutMs !== 10_000) problems.push('LUMEN_WEBHOOK_TIMEOUT_MS cannot be changed when LUMEN_ENVIRONMENT=production (partners are promised 10 s)');
  const eventRetentionDays = parseInteger('LUMEN_EVENT_RETENTION_DAYS', env.LUMEN_EVENT_RETENTION_DAYS, 30, 30, 3650, problems);

  const mapTileUrl = parseMapTileUrl(env.LUMEN_MAP_TILE_URL, problems);
  const mapsUrlTemplate = parseMapsUrlTemplate(env.LUMEN_MAPS_URL_TEMPLATE, problems);
  const mapTileAttribution = (env.LUMEN_MAP_TILE_ATTRIBUTION ?? '').trim() || '© OpenStreetMap contributors';

  if (problems.length > 0) throw new ConfigError(problems);
  if (!secretKey) {
    secretKey = dataDirSecretKey(dataDir);
    secretKeySource = 'data-dir';
  }

  return Object.freeze({
    databaseUrl,
    directDatabaseUrl,
    readDatabaseUrl,
    dbPrepared,
    partnerKeyCache,
    readMaxLagMs,
    port,
    metricsPort,
    host,
    environment,
    isProduction,
    dataDir,
    secretKey,
    previousSecretKey,
    secretKeySource,
    logLevel,
    allowLoopback,
    bodyLimitBytes,
    bodyTimeoutMs,
    validateResponses,
    rateLimitPerMinute,
    authFailuresPerMinute,
    intakeConcurrencyPerKey,
    bodyMemoryBytes,
    attachmentMemoryBytes,
    outboundConnections,
    signInFailuresPerAccount,
    signInFailuresPerAddress,
    passwordHashes,
    passwordCost,
    telemetryBatches,
    dbPoolSize,
    trustedProxies: Object.freeze(trustedProxies),
    maxConnections,
    maxConnectionsPerAddress,
    tenantBudgetShare,
    shutdownGraceSeconds,
    undoWindowSeconds,
    embeddedRestartAttempts,
    embeddedRestartDelayMs,
    publicOrigin,
    tls: certFile ? Object.freeze({ certFile, keyFile }) : null,
    geocoderUrl,
    geocodeBudgetMs,
    geocoderTimeoutMs,
    geocodeRetryDelaySeconds,
    poleMatchMeters,
    blobStore,
    attachmentDownload,
    idempotencyRetentionDays,
    pollTimeoutMs,
    pollMaxResponseBytes,
    webhookRetryScheduleMs,
    webhookTimeoutMs,
    webhookPollMs,
    webhookMaxInFlightPerPartner,
    eventRetentionDays,
    mapTileUrl,
    mapTileAttribution,
    mapsUrlTemplate,
  });
}

/** LUMEN_MAPS_URL_TEMPLATE: unset = OpenStreetMap's directions; else an http(s) URL holding {lat} and {lon}. */
function parseMapsUrlTemplate(raw: string | undefined, problems: string[]): string {
  const value = (raw ?? '').trim();
  if (value === '') return DEFAULT_MAPS_URL_TEMPLATE;
  let u: URL | null = null;
  try {
    u = new URL(value.replaceAll('{lat}', '0').replaceAll('{lon}', '0'));
  } catch {
    problems.push(`LUMEN_MAPS_URL_TEMPLATE is not a valid URL (got "${value}")`);
  }
  if (u && u.protocol !== 'https:' && u.protocol !== 'http:') problems.push('LUMEN_MAPS_URL_TEMPLATE must be an http(s) URL');
  if (!value.includes('{lat}') || !value.includes('{lon}')) problems.push('LUMEN_MAPS_URL_TEMPLATE must hold {lat} and {lon}');
  return value;
}

/** LUMEN_MAP_TILE_URL: unset = OpenStreetMap's tiles; `none` = no basemap; else an http(s) XYZ template. */
function parseMapTileUrl(raw: string | undefined, problems: string[]): string | null {
  const value = (raw ?? '').trim();
  if (value === '') return DEFAULT_MAP_TILE_URL;
  if (value.toLowerCase() === 'none') return null;
  let u: URL;
  try {
    u = new URL(value.replaceAll('{s}', 'a'));
  } catch {
    problems.push(`LUMEN_MAP_TILE_URL is not a valid URL (got "${value}")`);
    return null;
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') problems.push('LUMEN_MAP_TILE_URL must be an http(s) URL');
  if (!['{z}', '{x}', '{y}'].every((p) => value.includes(p))) problems.push('LUMEN_MAP_TILE_URL must hold {z}, {x} and {y}');
  return value;
}
