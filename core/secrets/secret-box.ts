/**
 * Upstream credentials at rest: AES-256-GCM under SECRETS_KEY, a fresh 96-bit IV per value, the tag checked on open.
 * Format: `v1.` + base64(iv | tag | ciphertext). Without SECRETS_KEY (development only; production requires it) a
 * random key is generated once and kept in DATA_DIR/secrets.key.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { InternalError } from '../errors.js';

const VERSION = 'v1.';

export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('SecretBox needs a 32-byte key');
  }

  seal(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return VERSION + Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64');
  }

  open(sealed: string): string {
    if (!sealed.startsWith(VERSION)) throw new InternalError('Unknown secret format.');
    const raw = Buffer.from(sealed.slice(VERSION.length), 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    try {
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    } catch (err) {
      throw new InternalError('A stored secret could not be decrypted (was SECRETS_KEY changed?).', { cause: err });
    }
  }
}

/** The configured key, or the development key kept under the data directory (created on first use). */
export function resolveSecretsKey(
  configured: Buffer | undefined,
  dataDir: string,
): { key: Buffer; generated: boolean } {
  if (configured) return { key: configured, generated: false };
  const file = path.join(dataDir, 'secrets.key');
  try {
    const existing = Buffer.from(readFileSync(file, 'utf8').trim(), 'hex');
    if (existing.length === 32) return { key: existing, generated: false };
  } catch {
    // not there yet
  }
  const key = randomBytes(32);
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(file, key.toString('hex'), { mode: 0o600 });
  return { key, generated: true };
}
