/**
 * Upstream credentials at rest: AES-256-GCM under SECRETS_KEY, a fresh 96-bit IV per value, the tag checked on open.
 * Format: `v2.<key id>.` + base64(iv | tag | ciphertext), where the key id is 8 hex characters of
 * HMAC-SHA256(key, "secret-box key id"): it names the key without revealing it, so open goes straight to the right
 * key. Values sealed before key ids (`v1.` + base64(iv | tag | ciphertext)) still open: each configured key is tried.
 * Values are sealed under the current key and opened under it or any previous one (SECRETS_KEY_PREVIOUS), which is
 * how a key is rotated (docs/operations.md, "Rotating SECRETS_KEY"; `npm run admin -- rotate-secrets`).
 * Without SECRETS_KEY (development only; production requires it) a random key is generated once and kept in
 * DATA_DIR/secrets.key.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { InternalError } from '../errors.js';

const V1 = 'v1.';
const V2 = 'v2.';
const KEY_ID_LENGTH = 8;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A key's public name: 8 hex characters of an HMAC under the key itself. */
export function secretKeyId(key: Buffer): string {
  return createHmac('sha256', key).update('secret-box key id').digest('hex').slice(0, KEY_ID_LENGTH);
}

interface BoxKey {
  id: string;
  key: Buffer;
}

export class SecretBox {
  private readonly current: BoxKey;
  /** Current first, then the previous keys in the order configured; duplicates dropped. */
  private readonly keys: readonly BoxKey[];

  constructor(key: Buffer, previous: readonly Buffer[] = []) {
    for (const k of [key, ...previous]) if (k.length !== 32) throw new Error('SecretBox needs 32-byte keys');
    this.current = { id: secretKeyId(key), key };
    const keys = [this.current];
    for (const k of previous) if (!keys.some((known) => known.key.equals(k))) keys.push({ id: secretKeyId(k), key: k });
    this.keys = keys;
  }

  /** The current key's id (what new values carry). */
  get keyId(): string {
    return this.current.id;
  }

  /** Every configured key's id, current first. */
  get keyIds(): string[] {
    return this.keys.map((k) => k.id);
  }

  seal(plaintext: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, iv);
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `${V2}${this.current.id}.${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64')}`;
  }

  /** Whether a value is already sealed under the current key (by its key id; open still checks the tag). */
  isCurrent(sealed: string): boolean {
    return sealed.startsWith(`${V2}${this.current.id}.`);
  }

  /** The key id a value names (`v1.` values name none). */
  keyIdOf(sealed: string): string | undefined {
    return sealed.startsWith(V2) ? sealed.slice(V2.length, V2.length + KEY_ID_LENGTH) : undefined;
  }

  open(sealed: string): string {
    let candidates: readonly BoxKey[];
    let body: string;
    if (sealed.startsWith(V2) && sealed[V2.length + KEY_ID_LENGTH] === '.') {
      const id = sealed.slice(V2.length, V2.length + KEY_ID_LENGTH);
      body = sealed.slice(V2.length + KEY_ID_LENGTH + 1);
      // A 32-bit id can collide between two keys: try every key that has it.
      candidates = this.keys.filter((k) => k.id === id);
      if (candidates.length === 0)
        throw new InternalError(
          `A stored secret is sealed under key ${id}, which is neither SECRETS_KEY (${this.current.id}) nor in ` +
            'SECRETS_KEY_PREVIOUS.',
        );
    } else if (sealed.startsWith(V1)) {
      body = sealed.slice(V1.length);
      candidates = this.keys;
    } else {
      throw new InternalError('Unknown secret format.');
    }
    const raw = Buffer.from(body, 'base64');
    if (raw.length < IV_BYTES + TAG_BYTES) throw new InternalError('A stored secret is truncated.');
    let cause: unknown;
    for (const { key } of candidates) {
      const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      try {
        return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
      } catch (err) {
        cause = err;
      }
    }
    throw new InternalError(
      sealed.startsWith(V1)
        ? 'A stored secret could not be decrypted under SECRETS_KEY or any SECRETS_KEY_PREVIOUS (was the key changed ' +
            'without keeping the old one in SECRETS_KEY_PREVIOUS?).'
        : `A stored secret sealed under key ${candidates[0]!.id} could not be decrypted (altered or corrupt).`,
      { cause },
    );
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
