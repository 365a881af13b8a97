import { randomBytes, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { AppError } from '../../lib/errors.js';
import { HashPool } from '../../lib/hash-pool.js';

/**
 * Operators' passwords: scrypt (node:crypto), memory-hard. N = 2^15 (LUMEN_PASSWORD_COST),
 * r = 8, p = 1 uses 32 MiB and about 50-100 ms per hash on a server core; a fresh 16-byte salt per hash;
 * 32-byte output compared in constant time. Stored as
 * `scrypt$<log2 N>$<r>$<p>$<salt b64>$<hash b64>`, so the cost can be raised later
 * while old hashes still verify. The plain password is never stored, logged or echoed.
 */
/** log2 N of new hashes: LUMEN_PASSWORD_COST, set when a runtime opens (15 until then). */
let logNForNew = 15;
const R = 8;
const P = 1;
const KEY_LENGTH = 32;

export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 1024;

/**
 * Every hash of this process runs here: on threads of its own, LUMEN_PASSWORD_HASHES at
 * once (set by the server at start; 2 until then), so a flood of sign-ins waits for them
 * (and past a short wait gets 503) instead of for the thread pool partners' photos use.
 */
const hashes = new HashPool(2);

export function setPasswordHashConcurrency(n: number): void {
  hashes.resize(n);
}

export function setPasswordCost(logN: number): void {
  logNForNew = logN;
}

function derive(password: string, salt: Buffer, logN: number, r: number, p: number): Promise<Buffer> {
  const options: ScryptOptions = { N: 2 ** logN, r, p, maxmem: 256 * 2 ** logN * r + 1024 * 1024 };
  return hashes.scrypt(password.normalize('NFC'), salt, KEY_LENGTH, options);
}

/** Refuses a password too short or too long (a pointer to the field that carried it). */
export function checkPassword(password: unknown, pointer = '/password'): string {
  if (typeof password !== 'string' || [...password].length < PASSWORD_MIN_LENGTH || password.length > PASSWORD_MAX_LENGTH) {
    throw new AppError('validation-failed', { count: 1 }, [{ pointer, message: `must be ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters` }]);
  }
  return password;
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const logN = logNForNew;
  const hash = await derive(password, salt, logN, R, P);
  return `scrypt$${logN}$${R}$${P}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

/** A hash of nothing anyone knows: verified against when the e-mail is unknown, so both answers take as long. */
let dummy: { logN: number; hash: Promise<string> } | null = null;

/**
 * True when `password` matches `stored`. With no stored hash (unknown e-mail, no
 * password set) a dummy hash is computed all the same and the answer is false.
 */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  let target = stored;
  if (target === null) {
    // Made on the first unknown e-mail, at the cost new hashes have (as the operators' own mostly do).
    if (dummy?.logN !== logNForNew) dummy = { logN: logNForNew, hash: hashPassword(randomBytes(24).toString('base64')) };
    target = await dummy.hash;
  }
  const parts = target.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [logN, r, p] = [Number(parts[1]), Number(parts[2]), Number(parts[3])];
  if (![logN, r, p].every((n) => Number.isInteger(n) && n > 0 && n < 64)) return false;
  const expected = Buffer.from(parts[5]!, 'base64');
  const actual = await derive(password.slice(0, PASSWORD_MAX_LENGTH), Buffer.from(parts[4]!, 'base64'), logN, r, p);
  return stored !== null && expected.length === actual.length && timingSafeEqual(expected, actual);
}

/** A password made by Lumen (demo operator, `operator create` without one): 20 random characters. */
export function generatePassword(): string {
  return randomBytes(15).toString('base64url');
}
