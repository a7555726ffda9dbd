// SecretBox with key rotation: sealed under the current key with its id, opened under the current or a previous key,
// `v1.` values (no key id) from before rotation still open, and a value under no configured key fails clearly.
import { createCipheriv, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../core/config.js';
import { cookieKeys } from '../../core/oauth/oauth-provider.js';
import { SecretBox, secretKeyId } from '../../core/secrets/secret-box.js';

const A = Buffer.alloc(32, 0xa1);
const B = Buffer.alloc(32, 0xb2);
const C = Buffer.alloc(32, 0xc3);

/** A value in the old format, sealed as the box did before key ids. */
function sealV1(key: Buffer, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return 'v1.' + Buffer.concat([iv, cipher.getAuthTag(), ct]).toString('base64');
}

describe('SecretBox', () => {
  it('seals as v2 with the current key id, a fresh IV each time, and opens it', () => {
    const box = new SecretBox(B, [A]);
    const sealed = box.seal('up-secret');
    expect(secretKeyId(B)).toMatch(/^[0-9a-f]{8}$/);
    expect(sealed.startsWith(`v2.${secretKeyId(B)}.`)).toBe(true);
    expect(sealed).not.toContain('up-secret');
    expect(box.seal('up-secret')).not.toBe(sealed);
    expect(box.open(sealed)).toBe('up-secret');
    expect(box.isCurrent(sealed)).toBe(true);
    expect(box.keyId).toBe(secretKeyId(B));
    expect(box.keyIds).toEqual([secretKeyId(B), secretKeyId(A)]);
    expect(new SecretBox(B).open(sealed)).toBe('up-secret');
  });

  it('opens v2 and v1 values sealed under a previous key', () => {
    const oldV2 = new SecretBox(A).seal('old-v2');
    const oldV1 = sealV1(A, 'old-v1');
    const box = new SecretBox(B, [C, A]);
    expect(box.open(oldV2)).toBe('old-v2');
    expect(box.open(oldV1)).toBe('old-v1');
    expect(box.isCurrent(oldV2)).toBe(false);
    expect(box.isCurrent(oldV1)).toBe(false);
    expect(box.keyIdOf(oldV2)).toBe(secretKeyId(A));
    expect(box.keyIdOf(oldV1)).toBeUndefined();
    // and a v1 value under the current key
    expect(box.open(sealV1(B, 'current-v1'))).toBe('current-v1');
  });

  it('fails with a clear error for a value under no configured key', () => {
    const box = new SecretBox(B, [C]);
    expect(() => box.open(new SecretBox(A).seal('x'))).toThrow(
      new RegExp(`sealed under key ${secretKeyId(A)}, which is neither SECRETS_KEY \\(${secretKeyId(B)}\\)`),
    );
    expect(() => box.open(sealV1(A, 'x'))).toThrow(/could not be decrypted under SECRETS_KEY or any SECRETS_KEY_PREV/);
    expect(() => box.open('v9.abc')).toThrow(/Unknown secret format/);
    expect(() => box.open('v2.zz')).toThrow(/Unknown secret format/);
  });

  it('dispatches on the key id: a v2 value is tried only under the key it names', () => {
    // A value re-labelled with another configured key's id fails even though the key it was sealed under is there.
    const box = new SecretBox(B, [A]);
    const underA = box.seal('x').replace(secretKeyId(B), secretKeyId(A));
    expect(() => box.open(underA)).toThrow(new RegExp(`sealed under key ${secretKeyId(A)} could not be decrypted`));
    const sealed = box.seal('x');
    const prefix = `v2.${secretKeyId(B)}.`;
    const raw = Buffer.from(sealed.slice(prefix.length), 'base64');
    raw.writeUInt8(raw.readUInt8(raw.length - 1) ^ 1, raw.length - 1); // one bit of the ciphertext
    expect(() => box.open(prefix + raw.toString('base64'))).toThrow(/altered or corrupt/);
  });

  it('refuses keys that are not 32 bytes', () => {
    expect(() => new SecretBox(Buffer.alloc(16))).toThrow(/32-byte/);
    expect(() => new SecretBox(B, [Buffer.alloc(31)])).toThrow(/32-byte/);
  });
});

describe('SECRETS_KEY_PREVIOUS', () => {
  const a = 'a1'.repeat(32);
  const c = Buffer.alloc(32, 0xc3).toString('base64');

  it('parses a comma-separated list of hex or base64 keys', () => {
    const config = loadConfig({ SECRETS_KEY: 'b2'.repeat(32), SECRETS_KEY_PREVIOUS: `${a}, ${c}` });
    expect(config.previousSecretsKeys).toEqual([A, C]);
    expect(loadConfig({ SECRETS_KEY: 'b2'.repeat(32) }).previousSecretsKeys).toEqual([]);
  });

  it('names the bad entry, and needs SECRETS_KEY', () => {
    expect(() => loadConfig({ SECRETS_KEY: 'b2'.repeat(32), SECRETS_KEY_PREVIOUS: `${a},short` })).toThrow(
      /SECRETS_KEY_PREVIOUS: entry 2 of 2 must be 32 bytes as 64 hex characters or base64/,
    );
    expect(() => loadConfig({ SECRETS_KEY_PREVIOUS: a })).toThrow(ConfigError);
    expect(() => loadConfig({ SECRETS_KEY_PREVIOUS: a })).toThrow(/SECRETS_KEY_PREVIOUS: needs SECRETS_KEY/);
  });

  it('OAuth cookies: signed with the current key, verified with the previous ones too', () => {
    const before = cookieKeys({ secretsKey: A, previousSecretsKeys: [] });
    const during = cookieKeys({ secretsKey: B, previousSecretsKeys: [A] });
    expect(during).toHaveLength(2);
    expect(during[1]).toBe(before[0]);
    expect(during[0]).not.toBe(before[0]);
    expect(cookieKeys({ secretsKey: undefined, previousSecretsKeys: [] })).toHaveLength(1);
  });
});
