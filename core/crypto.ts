/** Small, audited helpers for secrets: CSPRNG strings without modulo bias, SHA-256 digests, constant-time compare. */
import { hash as oneShotHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `length` characters drawn uniformly from `alphabet` (rejection sampling, so no modulo bias). */
export function randomString(length: number, alphabet: string = BASE62): string {
  if (alphabet.length < 2 || alphabet.length > 256) throw new RangeError('alphabet must have 2..256 characters');
  const limit = 256 - (256 % alphabet.length);
  let out = '';
  while (out.length < length) {
    const bytes = randomBytes(Math.ceil((length - out.length) * 1.3) + 8);
    for (const b of bytes) {
      if (b < limit) out += alphabet[b % alphabet.length];
      if (out.length === length) break;
    }
  }
  return out;
}

/** A decimal code of `digits` digits, uniform, from the CSPRNG (login codes). */
export function randomDigits(digits: number): string {
  return randomString(digits, '0123456789');
}

/** SHA-256 in hex, by node:crypto's one-shot `hash` (no Hash object per call: the gateway hashes every key it sees). */
export function sha256Hex(value: string | Buffer): string {
  return oneShotHash('sha256', value, 'hex');
}

export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}
