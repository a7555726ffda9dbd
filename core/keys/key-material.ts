/** API key material: `svc_live_` + 24 base62 characters from the CSPRNG (~143 bits). Only the SHA-256 is stored. */
import { API_KEY_PREFIX, API_KEY_RANDOM_LENGTH } from '../auth/bearer.js';
import { randomString, sha256Hex } from '../crypto.js';

/** Characters of the random part shown in `keyPrefix` (the rest, ~95 bits, stays secret). */
export const DISPLAY_CHARS = 8;

export interface KeyMaterial {
  plaintext: string;
  hash: string;
  prefix: string;
}

export function generateKeyMaterial(): KeyMaterial {
  const plaintext = API_KEY_PREFIX + randomString(API_KEY_RANDOM_LENGTH);
  return { plaintext, hash: hashKey(plaintext), prefix: displayPrefix(plaintext) };
}

export function hashKey(plaintext: string): string {
  return sha256Hex(plaintext);
}

export function displayPrefix(plaintext: string): string {
  return plaintext.slice(0, API_KEY_PREFIX.length + DISPLAY_CHARS);
}
