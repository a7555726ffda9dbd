/**
 * SpendStore on Redis: each operation is one Lua script (atomic, one round trip). Key layout, under the store's
 * prefix: `sp:o:{org}` (bal, ver, mode, susp, res, t), `sp:k:{key}` (sp, res), `sp:d:{key}:{day}` (sp, res; expires
 * after 3 days), `sp:rl:{prefix}:{window}` (rate window), `sp:i:{scoped idempotency key}` and `sp:resv` (open
 * reservations by expiry, each member carrying what the sweeper needs to void it).
 */
import type { Redis } from 'ioredis';
import type { Admission, AdmitInput, HydrateInput, ReservationRef, SettleInput, SpendStore } from './spend-store.js';

const DAY_TTL_MS = 3 * 86_400_000;
const RESV = 'sp:resv';
const orgKey = (orgId: string) => `sp:o:${orgId}`;
const keyKey = (keyId: string) => `sp:k:${keyId}`;
const dayKey = (keyId: string, day: string) => `sp:d:${keyId}:${day}`;
const idemKey = (k: string | null) => (k === null ? 'sp:i:-' : `sp:i:${k}`);

/**
 * An open reservation is one member of the `sp:resv` sorted set (scored by expiry) that carries what voiding it needs:
 * `reservation|org|key|day|price|ancestor,ancestor|idempotency key` (ids never contain `|` or `,`; the idempotency
 * key, which may, is last).
 */
function memberOf(
  r: Pick<ReservationRef, 'reservationId' | 'orgId' | 'keyId' | 'day' | 'priceCents' | 'idempotencyKey'> & {
    ancestorKeyIds: readonly string[];
  },
) {
  return `${r.reservationId}|${r.orgId}|${r.keyId}|${r.day}|${r.priceCents}|${r.ancestorKeyIds.join(',')}|${r.idempotencyKey ?? ''}`;
}

function parseMember(member: string): ReservationRef {
  const [reservationId, orgId, keyId, day, price, ancestors, ...idem] = member.split('|');
  const idempotencyKey = idem.join('|');
  return {
    reservationId: reservationId!,
    orgId: orgId!,
    keyId: keyId!,
    ancestorKeyIds: ancestors ? ancestors.split(',') : [],
    day: day!,
    priceCents: Number(price),
    idempotencyKey: idempotencyKey === '' ? null : idempotencyKey,
  };
}

// KEYS: org, key, day, rate, idem, resv, then one per ancestor key (nearest first).
// ARGV: price, budget(-1), cap(-1), limit, windowMs, now, resId, resTtl, hasIdem, reqHash, staleMs, member (the
// reservation as the sweeper needs it), perCallMax(-1), then each ancestor's budget (-1).
// Idempotent per reservation: a second run of the same admission (ioredis resending a command whose answer was lost
// in a reconnect) finds its own reservation, or its own in-flight claim, and changes nothing.
const ADMIT = `
local price = tonumber(ARGV[1])
if price > 0 and redis.call('ZSCORE', KEYS[6], ARGV[12]) then return {'admitted', '0'} end
local o = redis.call('HMGET', KEYS[1], 'bal', 'mode', 'susp', 'res', 't', 'lim', 'gen')
local gen = o[7] or '0'
if not o[1] or not o[2] then return {'hydrate', gen} end
local k
local d
local anc = {}
if price > 0 then
  k = redis.call('HMGET', KEYS[2], 'sp', 'res')
  d = redis.call('HMGET', KEYS[3], 'sp', 'res')
  if not k[1] or not d[1] then return {'hydrate'} end
  for i = 7, #KEYS do
    anc[i] = redis.call('HMGET', KEYS[i], 'sp', 'res')
    if not anc[i][1] then return {'hydrate'} end
  end
end
if ARGV[9] == '1' then
  local rec = redis.call('GET', KEYS[5])
  if rec then
    if string.sub(rec, 3, 2 + #ARGV[10]) ~= ARGV[10] then return {'mismatch'} end
    if string.sub(rec, 1, 1) == 'p' then
      if string.sub(rec, -#ARGV[7] - 1) == '|' .. ARGV[7] then return {'admitted', '0'} end
      return {'in_flight'}
    end
    return {'replay', rec}
  end
end
local count = redis.call('INCR', KEYS[4])
if count == 1 then redis.call('PEXPIRE', KEYS[4], ARGV[5]) end
if count > tonumber(ARGV[4]) then return {'rate_limited', tostring(redis.call('PTTL', KEYS[4]))} end
if o[3] == '1' then return {'suspended'} end
if price > 0 then
  local perCall = tonumber(ARGV[13])
  if perCall >= 0 and price > perCall then return {'per_call'} end
  local budget = tonumber(ARGV[2])
  if budget >= 0 and tonumber(k[1]) + tonumber(k[2] or '0') + price > budget then return {'budget'} end
  for i = 7, #KEYS do
    local b = tonumber(ARGV[i + 7])
    if b >= 0 and tonumber(anc[i][1]) + tonumber(anc[i][2] or '0') + price > b then return {'budget', tostring(i - 6)} end
  end
  local cap = tonumber(ARGV[3])
  if cap >= 0 and tonumber(d[1]) + tonumber(d[2] or '0') + price > cap then return {'daily_cap'} end
  local headroom = tonumber(o[1]) - tonumber(o[4] or '0')
  if o[2] == 'card' then
    if headroom + tonumber(o[6] or '0') < price then return {'credit_limit'} end
  elseif headroom < price then
    return {'funds'}
  end
  if redis.call('ZADD', KEYS[6], 'NX', tonumber(ARGV[6]) + tonumber(ARGV[8]), ARGV[12]) == 0 then
    return {'admitted', '0'}
  end
  redis.call('HINCRBY', KEYS[1], 'res', price)
  redis.call('HINCRBY', KEYS[2], 'res', price)
  redis.call('HINCRBY', KEYS[3], 'res', price)
  for i = 7, #KEYS do redis.call('HINCRBY', KEYS[i], 'res', price) end
end
if ARGV[9] == '1' then
  redis.call('SET', KEYS[5], 'p|' .. ARGV[10] .. '|' .. ARGV[7], 'PX', ARGV[8])
end
if tonumber(ARGV[6]) - tonumber(o[5] or '0') > tonumber(ARGV[11]) then return {'admitted', '1', gen} end
return {'admitted', '0'}
`;

// Release a reservation's hold on the org, the key, the key's day and each ancestor (never below zero).
const RELEASE = `
local function release(keys, price)
  for _, key in ipairs(keys) do
    if redis.call('HINCRBY', key, 'res', -price) < 0 then redis.call('HSET', key, 'res', 0) end
  end
end
`;

// Any number of settles in one call. Per settle, KEYS: org, key, day, resv, idem, then its n ancestors; ARGV (10 +
// n): price, member, bal, ver, ksp, dsp, record, idemTtl, hasIdem, n, then each ancestor's spend after the commit
// ('' when unknown).
const SETTLE = `${RELEASE}
local k = 0
local a = 0
while a < #ARGV do
  local price = tonumber(ARGV[a + 1])
  local n = tonumber(ARGV[a + 10])
  if price > 0 and redis.call('ZREM', KEYS[k + 4], ARGV[a + 2]) == 1 then
    local held = {KEYS[k + 1], KEYS[k + 2], KEYS[k + 3]}
    for j = 1, n do held[#held + 1] = KEYS[k + 5 + j] end
    release(held, price)
  end
  if ARGV[a + 4] ~= '' and redis.call('HEXISTS', KEYS[k + 1], 'mode') == 1 then
    if tonumber(ARGV[a + 4]) > tonumber(redis.call('HGET', KEYS[k + 1], 'ver') or '-1') then
      redis.call('HSET', KEYS[k + 1], 'bal', ARGV[a + 3], 'ver', ARGV[a + 4])
    end
  end
  if ARGV[a + 5] ~= '' then
    local sp = redis.call('HGET', KEYS[k + 2], 'sp')
    if sp and tonumber(ARGV[a + 5]) > tonumber(sp) then redis.call('HSET', KEYS[k + 2], 'sp', ARGV[a + 5]) end
    local dsp = redis.call('HGET', KEYS[k + 3], 'sp')
    if dsp and tonumber(ARGV[a + 6]) > tonumber(dsp) then redis.call('HSET', KEYS[k + 3], 'sp', ARGV[a + 6]) end
  end
  for j = 1, n do
    local v = ARGV[a + 10 + j]
    if v ~= '' then
      local sp = redis.call('HGET', KEYS[k + 5 + j], 'sp')
      if sp and tonumber(v) > tonumber(sp) then redis.call('HSET', KEYS[k + 5 + j], 'sp', v) end
    end
  end
  if ARGV[a + 9] == '1' then
    if ARGV[a + 7] ~= '' then
      redis.call('SET', KEYS[k + 5], ARGV[a + 7], 'PX', ARGV[a + 8])
    else
      redis.call('DEL', KEYS[k + 5])
    end
  end
  k = k + 5 + n
  a = a + 10 + n
end
return 1
`;

// KEYS: org, key, day, resv, idem, then the ancestors. ARGV: price, member, hasIdem, resId.
const VOID = `${RELEASE}
local price = tonumber(ARGV[1])
local open = 0
if price > 0 then
  open = redis.call('ZREM', KEYS[4], ARGV[2])
  if open == 1 then
    local held = {KEYS[1], KEYS[2], KEYS[3]}
    for i = 6, #KEYS do held[#held + 1] = KEYS[i] end
    release(held, price)
  end
end
if ARGV[3] == '1' then
  local rec = redis.call('GET', KEYS[5])
  if rec and string.sub(rec, 1, 1) == 'p' and string.sub(rec, -#ARGV[4]) == ARGV[4] then redis.call('DEL', KEYS[5]) end
end
return open
`;

// KEYS: org, key, day, then the ancestors. ARGV: bal, ver, mode, susp, now, hasKey, ksp, dsp, dayTtl, creditLimit,
// generation ('' = any), then each ancestor's spend.
const HYDRATE = `
if tonumber(ARGV[2]) >= tonumber(redis.call('HGET', KEYS[1], 'ver') or '-1') then
  redis.call('HSET', KEYS[1], 'bal', ARGV[1], 'ver', ARGV[2])
end
if ARGV[11] == '' or ARGV[11] == (redis.call('HGET', KEYS[1], 'gen') or '0') then
  redis.call('HSET', KEYS[1], 'mode', ARGV[3], 'susp', ARGV[4], 't', ARGV[5], 'lim', ARGV[10])
end
if ARGV[6] == '1' then
  local sp = redis.call('HGET', KEYS[2], 'sp')
  if not sp or tonumber(ARGV[7]) > tonumber(sp) then redis.call('HSET', KEYS[2], 'sp', ARGV[7]) end
  local dsp = redis.call('HGET', KEYS[3], 'sp')
  if not dsp or tonumber(ARGV[8]) > tonumber(dsp) then redis.call('HSET', KEYS[3], 'sp', ARGV[8]) end
  redis.call('PEXPIRE', KEYS[3], ARGV[9])
  for i = 4, #KEYS do
    local asp = redis.call('HGET', KEYS[i], 'sp')
    if not asp or tonumber(ARGV[i + 8]) > tonumber(asp) then redis.call('HSET', KEYS[i], 'sp', ARGV[i + 8]) end
  end
end
return 1
`;

// KEYS: org. A new generation, and the flags gone: the next admission reads Postgres.
const FORGET = `
redis.call('HINCRBY', KEYS[1], 'gen', 1)
redis.call('HDEL', KEYS[1], 'mode', 't')
return 1
`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    spAdmit(...args: (string | number)[]): Result<string[], Context>;
    spSettle(...args: (string | number)[]): Result<number, Context>;
    spVoid(...args: (string | number)[]): Result<number, Context>;
    spHydrate(...args: (string | number)[]): Result<number, Context>;
    spForget(key: string): Result<number, Context>;
  }
}
import type { Result } from 'ioredis';

export class RedisSpendStore implements SpendStore {
  constructor(private readonly redis: Redis) {
    // No fixed key counts: each call says how many keys follow (ancestors vary per key; settles batch).
    redis.defineCommand('spAdmit', { lua: ADMIT });
    redis.defineCommand('spSettle', { lua: SETTLE });
    redis.defineCommand('spVoid', { lua: VOID });
    redis.defineCommand('spHydrate', { lua: HYDRATE });
    redis.defineCommand('spForget', { numberOfKeys: 1, lua: FORGET });
  }

  async admit(a: AdmitInput): Promise<Admission> {
    const window = Math.floor(a.nowMs / 60_000);
    const ancestorIds = a.ancestors.map((x) => x.keyId);
    const keys = [
      orgKey(a.orgId),
      keyKey(a.keyId),
      dayKey(a.keyId, a.day),
      `sp:rl:${a.rateKey}:${window}`,
      idemKey(a.idempotencyKey),
      RESV,
      ...ancestorIds.map(keyKey),
    ];
    const reply = await this.redis.spAdmit(
      keys.length,
      ...keys,
      a.priceCents,
      a.budgetCents ?? -1,
      a.dailyCapCents ?? -1,
      a.ratePerMin,
      60_000,
      a.nowMs,
      a.reservationId,
      a.reservationTtlMs,
      a.idempotencyKey === null ? '0' : '1',
      a.requestHash,
      a.staleAfterMs,
      memberOf({ ...a, ancestorKeyIds: ancestorIds }),
      a.perCallMaxCents ?? -1,
      ...a.ancestors.map((x) => x.budgetCents ?? -1),
    );
    switch (reply[0]) {
      case 'admitted':
        return reply[1] === '1'
          ? { outcome: 'admitted', stale: true, generation: Number(reply[2] ?? 0) }
          : { outcome: 'admitted', stale: false };
      case 'hydrate':
        return { outcome: 'hydrate', generation: Number(reply[1] ?? 0) };
      case 'replay':
        return { outcome: 'replay', record: reply[1]! };
      case 'rate_limited':
        return { outcome: 'rate_limited', retryAfterMs: Math.max(Number(reply[1]), 1) };
      case 'budget':
        // With an ancestor's position (1 = the nearest) when it was an ancestor's budget that stopped the call.
        return reply[1]
          ? { outcome: 'budget', ancestorKeyId: a.ancestors[Number(reply[1]) - 1]!.keyId }
          : { outcome: 'budget' };
      case 'in_flight':
      case 'mismatch':
      case 'suspended':
      case 'per_call':
      case 'daily_cap':
      case 'funds':
      case 'credit_limit':
        return { outcome: reply[0] };
      default:
        throw new Error(`unexpected admit reply ${String(reply[0])}`);
    }
  }

  async settle(s: SettleInput): Promise<void> {
    await this.settleMany([s]);
  }

  async settleMany(settles: readonly SettleInput[]): Promise<void> {
    if (settles.length === 0) return;
    const keys: string[] = [];
    const args: (string | number)[] = [];
    for (const s of settles) {
      keys.push(
        orgKey(s.orgId),
        keyKey(s.keyId),
        dayKey(s.keyId, s.day),
        RESV,
        idemKey(s.idempotencyKey),
        ...s.ancestorKeyIds.map(keyKey),
      );
      args.push(
        s.priceCents,
        memberOf(s),
        s.org?.creditCents ?? '',
        s.org?.balanceVersion ?? '',
        s.key?.spentCents ?? '',
        s.key?.daySpentCents ?? '',
        s.record ?? '',
        s.idempotencyTtlMs,
        s.idempotencyKey === null ? '0' : '1',
        s.ancestorKeyIds.length,
        ...s.ancestorKeyIds.map((_, i) => s.ancestorSpentCents?.[i] ?? ''),
      );
    }
    await this.redis.spSettle(keys.length, ...keys, ...args);
  }

  async void(r: ReservationRef): Promise<boolean> {
    const keys = [
      orgKey(r.orgId),
      keyKey(r.keyId),
      dayKey(r.keyId, r.day),
      RESV,
      idemKey(r.idempotencyKey),
      ...r.ancestorKeyIds.map(keyKey),
    ];
    const open = await this.redis.spVoid(
      keys.length,
      ...keys,
      r.priceCents,
      memberOf(r),
      r.idempotencyKey === null ? '0' : '1',
      r.reservationId,
    );
    return open === 1;
  }

  async hydrate(h: HydrateInput): Promise<void> {
    const hasKey = h.key !== undefined && h.keyId !== undefined && h.day !== undefined;
    const ancestors = hasKey ? (h.ancestors ?? []) : [];
    const keys = [
      orgKey(h.orgId),
      keyKey(h.keyId ?? '-'),
      dayKey(h.keyId ?? '-', h.day ?? '-'),
      ...ancestors.map((x) => keyKey(x.keyId)),
    ];
    await this.redis.spHydrate(
      keys.length,
      ...keys,
      h.org.creditCents,
      h.org.balanceVersion,
      h.org.billingMode,
      h.org.suspended ? '1' : '0',
      h.nowMs,
      hasKey ? '1' : '0',
      h.key?.spentCents ?? 0,
      h.key?.daySpentCents ?? 0,
      DAY_TTL_MS,
      h.org.creditLimitCents,
      h.generation ?? '',
      ...ancestors.map((x) => x.spentCents),
    );
  }

  async forgetOrg(orgId: string): Promise<void> {
    await this.redis.spForget(orgKey(orgId));
  }

  async expired(nowMs: number, limit: number): Promise<ReservationRef[]> {
    const members = await this.redis.zrangebyscore(RESV, '-inf', nowMs, 'LIMIT', 0, limit);
    return members.map(parseMember);
  }

  async idempotencyRecord(key: string): Promise<string | null> {
    return this.redis.get(idemKey(key));
  }
}
