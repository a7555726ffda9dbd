/**
 * Prefixed, time-ordered identifiers (`org_01JH…`): a prefix from one map, then 26 Crockford base32 characters
 * holding a 48-bit millisecond timestamp and 80 random bits (ULID layout, lower-cased). Ordered by creation time,
 * which keyset pagination relies on.
 */
import { randomFillSync } from 'node:crypto';

export const ID_PREFIXES = {
  org: 'org',
  user: 'usr',
  apiKey: 'key',
  ledgerEntry: 'led',
  request: 'req',
  session: 'ses',
  api: 'api',
  endpoint: 'ep',
  document: 'doc',
  usage: 'use',
  usageBatch: 'ubt',
  earningAccrual: 'acr',
  lease: 'lease',
  event: 'evt',
  emailVerification: 'ver',
  loginCode: 'lgc',
  avatar: 'avt',
  termsAcceptance: 'tac',
  payment: 'pay',
  payout: 'po',
  apiRequest: 'areq',
  apiRequestVote: 'avote',
  revision: 'rev',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';

// The last timestamp encoded: ids minted in the same millisecond (several per ms on the gateway) share it.
let lastMs = -1;
let lastTime = '';

function encodeTime(ms: number): string {
  if (ms === lastMs) return lastTime;
  let out = '';
  let t = ms;
  for (let i = 0; i < 10; i++) {
    out = CROCKFORD[t % 32]! + out;
    t = Math.floor(t / 32);
  }
  lastMs = ms;
  lastTime = out;
  return out;
}

// Random bytes come from a pool refilled 4 KiB at a time: one randomFillSync per ~400 ids instead of one per id
// (ids are minted on the gateway's hot path: request, usage and ledger ids).
const POOL = Buffer.alloc(4096);
let poolOffset = POOL.length;

function encodeRandom(): string {
  if (poolOffset + 10 > POOL.length) {
    randomFillSync(POOL);
    poolOffset = 0;
  }
  const start = poolOffset;
  poolOffset += 10; // 80 bits -> 16 base32 characters
  let bits = 0;
  let value = 0;
  let out = '';
  for (let i = start; i < start + 10; i++) {
    const b = POOL[i]!;
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += CROCKFORD[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  return out;
}

export function newId(kind: IdKind, now: number = Date.now()): string {
  return `${ID_PREFIXES[kind]}_${encodeTime(now)}${encodeRandom()}`;
}

const ID_BODY = /^[0-9a-hjkmnp-tv-z]{26}$/;

/** True when `value` is an id of this kind (cheap shape check before a database lookup). */
export function isId(kind: IdKind, value: string): boolean {
  const prefix = `${ID_PREFIXES[kind]}_`;
  return value.startsWith(prefix) && ID_BODY.test(value.slice(prefix.length));
}

/**
 * The millisecond timestamp an id was minted with (its first 10 body characters), or null for a malformed id. A usage
 * id's instant is its usage row's `created_at` (the gateway mints both from one clock reading), which keeps the
 * partitioned usage_events' key (id, created_at) exactly as unique as the id: the sweeper fences with it.
 */
export function idTime(id: string): Date | null {
  const body = id.slice(id.indexOf('_') + 1);
  if (!ID_BODY.test(body)) return null;
  let ms = 0;
  for (const ch of body.slice(0, 10)) ms = ms * 32 + CROCKFORD.indexOf(ch);
  return new Date(ms);
}
