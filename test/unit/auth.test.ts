import { describe, expect, it } from 'vitest';
import { parseBearer } from '../../core/auth/bearer.js';
import {
  CONSUMER_SCOPES,
  requireScope,
  SCOPES,
  VERIFIED_EXTRA_SCOPES,
  type Principal,
} from '../../core/auth/scopes.js';
import { ForbiddenError, UnauthenticatedError } from '../../core/errors.js';
import { DISPLAY_CHARS, generateKeyMaterial, hashKey } from '../../core/keys/key-material.js';
import { sha256Hex } from '../../core/crypto.js';

const KEY = 'svc_live_' + 'A1b2C3d4E5f6G7h8I9j0K1l2';

describe('parseBearer', () => {
  it('recognises API keys and session tokens', () => {
    expect(parseBearer(`Bearer ${KEY}`)).toEqual({ type: 'api_key', token: KEY });
    expect(parseBearer(`bearer ${KEY}`)).toEqual({ type: 'api_key', token: KEY });
    expect(parseBearer('Bearer sess_' + 'x'.repeat(32))).toEqual({ type: 'session', token: 'sess_' + 'x'.repeat(32) });
  });

  it.each([
    [undefined, /Missing Authorization/],
    ['', /Missing Authorization/],
    [KEY, /Malformed Authorization header/],
    ['Basic abc', /Malformed Authorization header/],
    ['Bearer', /Malformed Authorization header/],
    ['Bearer svc_live_short', /Malformed bearer token/],
    [`Bearer ${KEY}x`, /Malformed bearer token/],
    ['Bearer svc_test_A1b2C3d4E5f6G7h8I9j0K1l2', /Malformed bearer token/],
    [`Bearer ${KEY} extra`, /Malformed Authorization header/],
  ])('refuses %j with 401', (header, message) => {
    const attempt = () => parseBearer(header);
    expect(attempt).toThrow(UnauthenticatedError);
    expect(attempt).toThrow(message);
  });
});

describe('key material', () => {
  it('is svc_live_ plus 24 base62 characters, stored as SHA-256 with a display prefix', () => {
    const m = generateKeyMaterial();
    expect(m.plaintext).toMatch(/^svc_live_[0-9A-Za-z]{24}$/);
    expect(m.hash).toBe(sha256Hex(m.plaintext));
    expect(hashKey(m.plaintext)).toBe(m.hash);
    expect(m.prefix).toBe(m.plaintext.slice(0, 9 + DISPLAY_CHARS));
    expect(m.plaintext.startsWith(m.prefix)).toBe(true);
  });

  it('never repeats', () => {
    const keys = new Set(Array.from({ length: 5_000 }, () => generateKeyMaterial().plaintext));
    expect(keys.size).toBe(5_000);
  });
});

describe('scopes', () => {
  const principal: Principal = {
    type: 'api_key',
    orgId: 'org_1',
    keyId: 'key_1',
    keyPrefix: 'svc_live_x',
    scopes: CONSUMER_SCOPES,
  };

  it('consumer scopes plus the verified extras are all the scopes', () => {
    expect([...CONSUMER_SCOPES, ...VERIFIED_EXTRA_SCOPES].sort()).toEqual([...SCOPES].sort());
  });

  it('names the missing scope in the 403', () => {
    expect(() => requireScope(principal, 'proxy:call')).not.toThrow();
    let err: ForbiddenError | undefined;
    try {
      requireScope(principal, 'billing:write');
    } catch (e) {
      err = e as ForbiddenError;
    }
    expect(err).toBeInstanceOf(ForbiddenError);
    expect(err!.status).toBe(403);
    expect(err!.message).toContain('billing:write');
    expect(err!.details).toEqual({ missing_scope: 'billing:write' });
  });
});
