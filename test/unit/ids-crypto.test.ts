import { describe, expect, it } from 'vitest';
import { BASE62, randomDigits, randomString, safeEqual, sha256Hex } from '../../core/crypto.js';
import { ID_PREFIXES, isId, newId } from '../../core/ids.js';
import { resolveRequestId } from '../../core/request-id.js';

describe('newId', () => {
  it('is prefixed and 26 Crockford characters', () => {
    const id = newId('org');
    expect(id).toMatch(/^org_[0-9a-hjkmnp-tv-z]{26}$/);
    expect(isId('org', id)).toBe(true);
    expect(isId('apiKey', id)).toBe(false);
  });

  it('sorts by creation time', () => {
    const a = newId('ledgerEntry', 1_700_000_000_000);
    const b = newId('ledgerEntry', 1_700_000_000_001);
    const c = newId('ledgerEntry', 1_800_000_000_000);
    expect([c, a, b].sort()).toEqual([a, b, c]);
  });

  it('does not repeat', () => {
    const ids = new Set(Array.from({ length: 20_000 }, () => newId('usage')));
    expect(ids.size).toBe(20_000);
  });

  it('has one prefix per kind', () => {
    const prefixes = Object.values(ID_PREFIXES);
    expect(new Set(prefixes).size).toBe(prefixes.length);
  });
});

describe('crypto helpers', () => {
  it('draws strings of the right length from the alphabet', () => {
    const s = randomString(1000);
    expect(s).toHaveLength(1000);
    expect([...s].every((ch) => BASE62.includes(ch))).toBe(true);
    expect(randomDigits(6)).toMatch(/^\d{6}$/);
  });

  it('is close to uniform over the alphabet (no modulo bias)', () => {
    const n = 62 * 4000;
    const counts = new Map<string, number>();
    for (const ch of randomString(n)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    expect(counts.size).toBe(62);
    // Chi-square with 61 degrees of freedom; 120 is far beyond the 99.99th percentile (~109).
    const expected = n / 62;
    let chi = 0;
    for (const c of counts.values()) chi += (c - expected) ** 2 / expected;
    expect(chi).toBeLessThan(120);
  });

  it('hashes with SHA-256 and compares in constant time', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(safeEqual('abc', 'abc')).toBe(true);
    expect(safeEqual('abc', 'abd')).toBe(false);
    expect(safeEqual('abc', 'abcd')).toBe(false);
  });
});

describe('resolveRequestId', () => {
  it('keeps a well-formed caller id and replaces anything else', () => {
    expect(resolveRequestId('trace-1234abcd')).toBe('trace-1234abcd');
    expect(resolveRequestId(['trace-1234abcd', 'x'])).toBe('trace-1234abcd');
    expect(resolveRequestId(undefined)).toMatch(/^req_/);
    expect(resolveRequestId('short')).toMatch(/^req_/);
    expect(resolveRequestId('has spaces in it')).toMatch(/^req_/);
    expect(resolveRequestId('x'.repeat(200))).toMatch(/^req_/);
    expect(resolveRequestId('evil\r\nSet-Cookie: a=b')).toMatch(/^req_/);
  });
});
