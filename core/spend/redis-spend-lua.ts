/**
 * The Lua scripts of RedisSpendStore (core/spend/redis-spend-store.ts: the key layout and what each operation means).
 * Every deadline two processes compare (a reservation's expiry, a balance's age) is read from Redis's own clock
 * (`TIME`, allowed in scripts since Redis 5's effects replication), so gateways whose clocks disagree still agree on
 * when a reservation expires: the sweeper of one cannot void another's live reservation.
 */
import { CHARGE_CALL_LUA } from '../money/money-rules.js';

/**
 * Milliseconds on the Redis server's clock, plus the caller's test offset (RedisSpendStore: a ManualClock's lead over
 * the wall clock; always 0 in production, whatever the gateway machine's own clock says).
 */
const NOW_MS = `
local function nowMs(offset)
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(offset)
end
`;

// Idempotent per reservation: a second run of the same admission (ioredis resending a command whose answer was lost
// in a reconnect) finds its own reservation, or its own in-flight claim, and changes nothing.
/** A new key version: Redis's time and a per-org counter (unique even after the org's hash was lost). */
const KEY_VERSION = `
local function KEY_VERSION()
  return nowMs(0) .. '.' .. redis.call('HINCRBY', KEYS[1], 'kvn', 1)
end
-- Revocations and tightened caps reach every gateway here, not only by pub/sub: the caller's cached key version
-- against the org's ('' = no check). A missing version (a new org, a flushed Redis) gets a new one, unique on this
-- server's clock, so no cached copy can match it by chance. Returns the current version when the copy is stale.
local function checkKeyVersion(orgKey, kv, keyVersion)
  if keyVersion == '' then return nil end
  if not kv then
    kv = KEY_VERSION()
    redis.call('HSET', orgKey, 'kv', kv)
  end
  if kv ~= keyVersion then return kv end
  return nil
end
`;

export const ADMIT = `${NOW_MS}${KEY_VERSION}
local orgKey, keyKey, dayKey, rateKey, idemKey, resvKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local seenKey, seenStateKey = KEYS[7], KEYS[8] -- the org's seen set and its state (ep, ok)
-- KEYS[9..]: the n ancestors' keys, nearest first, then each one's day in the same order
local FIRST_ANCESTOR = 9
local n = (#KEYS - FIRST_ANCESTOR + 1) / 2
local price = tonumber(ARGV[1])
local budget = tonumber(ARGV[2]) -- -1: none
local dailyCap = tonumber(ARGV[3]) -- -1: none
local rateLimit = tonumber(ARGV[4])
local windowMs = ARGV[5]
local now = nowMs(ARGV[6]) -- every deadline is on Redis's clock (ARGV[6]: the test offset)
local reservationId = ARGV[7]
local reservationTtl = tonumber(ARGV[8])
local hasIdem = ARGV[9] == '1'
local requestHash = ARGV[10]
local staleMs = tonumber(ARGV[11])
local member = ARGV[12] -- the reservation as the sweeper needs it
local perCallMax = tonumber(ARGV[13]) -- -1: none
local keyVersion = ARGV[14] -- the caller's cached key version ('' = no check)
local seenHash = ARGV[15] -- the idempotency key's short hash ('' = none)
local fastPath = ARGV[16] == '1' -- the caller may answer a first-seen key from the seen set
local noRecall = ARGV[17] == '1' -- a spend refusal is the answer even while leases admit on the org
-- ARGV[17 + j]: the j-th ancestor's budget, ARGV[17 + n + j]: its daily cap (-1: none)
local function ancestorBudget(j) return tonumber(ARGV[17 + j]) end
local function ancestorDailyCap(j) return tonumber(ARGV[17 + n + j]) end

-- Spend in Postgres (sp), held by open reservations (res), and settled but not yet in Postgres (pend).
local function committed(h) return tonumber(h[1]) + tonumber(h[2] or '0') + tonumber(h[3] or '0') end

if price > 0 and redis.call('ZSCORE', resvKey, member) then return {'admitted', '0'} end
local o = redis.call('HMGET', orgKey, 'bal', 'mode', 'susp', 'res', 't', 'lim', 'gen', 'pend', 'kv', 'ls')
-- A spend refusal while leases admit calls on the org (core/spend/leases.ts): their unused part may be what this call
-- lacks. They are asked back (no new lease for 2 s; the holders return what they do not need when their admission
-- window ends, within 1 s) and the caller retries shortly, rather than answering 402 falsely.
local function recalled(refusal)
  if not noRecall and tonumber(o[10] or '0') > 0 then
    redis.call('HSET', orgKey, 'rc', now)
    return {'leased'}
  end
  return refusal
end
local staleKey = checkKeyVersion(orgKey, o[9], keyVersion)
if staleKey then return {'stale_key', staleKey} end
local gen = o[7] or '0'
if not o[1] or not o[2] then return {'hydrate', gen} end
local k
local d
local anc = {} -- each ancestor's spend, and its day's
local ancDay = {}
if price > 0 then
  k = redis.call('HMGET', keyKey, 'sp', 'res', 'pend')
  d = redis.call('HMGET', dayKey, 'sp', 'res', 'pend')
  if not k[1] or not d[1] then return {'hydrate'} end
  for j = 1, n do
    anc[j] = redis.call('HMGET', KEYS[FIRST_ANCESTOR + j - 1], 'sp', 'res', 'pend')
    ancDay[j] = redis.call('HMGET', KEYS[FIRST_ANCESTOR + n + j - 1], 'sp', 'res', 'pend')
    if not anc[j][1] or not ancDay[j][1] then return {'hydrate'} end
  end
end
if hasIdem then
  local rec = redis.call('GET', idemKey)
  if rec then
    if string.sub(rec, 3, 2 + #requestHash) ~= requestHash then return {'mismatch'} end
    if string.sub(rec, 1, 1) == 'p' then
      if string.sub(rec, -#reservationId - 1) == '|' .. reservationId then return {'admitted', '0'} end
      return {'in_flight'}
    end
    return {'replay', rec}
  end
end
-- No record of the key here: may Postgres be skipped? Only if the org's seen set is stamped complete and lacks it.
local seenCheck = ''
if hasIdem and seenHash ~= '' then
  if redis.call('HGET', seenStateKey, 'ok') ~= '1' then
    seenCheck = 'unstamped'
  elseif redis.call('SISMEMBER', seenKey, seenHash) == 1 then
    seenCheck = 'seen'
  elseif fastPath then
    seenCheck = 'new'
  end
end
local count = redis.call('INCR', rateKey)
if count == 1 then redis.call('PEXPIRE', rateKey, windowMs) end
if count > rateLimit then return {'rate_limited', tostring(redis.call('PTTL', rateKey))} end
if o[3] == '1' then return {'suspended'} end
if price > 0 then
  if perCallMax >= 0 and price > perCallMax then return {'per_call'} end
  if budget >= 0 and committed(k) + price > budget then return recalled({'budget'}) end
  for j = 1, n do
    local b = ancestorBudget(j)
    if b >= 0 and committed(anc[j]) + price > b then return recalled({'budget', tostring(j)}) end
  end
  if dailyCap >= 0 and committed(d) + price > dailyCap then return recalled({'daily_cap'}) end
  for j = 1, n do
    local c = ancestorDailyCap(j)
    if c >= 0 and committed(ancDay[j]) + price > c then return recalled({'daily_cap', tostring(j)}) end
  end
  local headroom = tonumber(o[1]) - tonumber(o[4] or '0') - tonumber(o[8] or '0')
  if o[2] == 'card' then
    if headroom + tonumber(o[6] or '0') < price then return recalled({'credit_limit'}) end
  elseif headroom < price then
    return recalled({'funds'})
  end
  if redis.call('ZADD', resvKey, 'NX', now + reservationTtl, member) == 0 then return {'admitted', '0'} end
  redis.call('HINCRBY', orgKey, 'res', price)
  redis.call('HINCRBY', keyKey, 'res', price)
  redis.call('HINCRBY', dayKey, 'res', price)
  for i = FIRST_ANCESTOR, #KEYS do redis.call('HINCRBY', KEYS[i], 'res', price) end -- ancestors and their days
end
if hasIdem then
  redis.call('SET', idemKey, 'p|' .. requestHash .. '|' .. reservationId, 'PX', reservationTtl)
end
if now - tonumber(o[5] or '0') > staleMs then return {'admitted', '1', gen, seenCheck} end
return {'admitted', '0', gen, seenCheck}
`;

// Release a reservation's hold on the org, the key, the key's day and each ancestor and its day (never below zero); move it into
// pending spend; append to a usage stream and deliver the entry to this drainer in the same step.
export const HELPERS = `${CHARGE_CALL_LUA}
local GROUP = 'drain'
local function add(keys, field, by)
  for _, key in ipairs(keys) do
    if redis.call('HINCRBY', key, field, by) < 0 then redis.call('HSET', key, field, 0) end
  end
end
-- Append a usage event and deliver it to this consumer at once (its pending list is the drainer's claim ticket).
local function append(streamKey, consumer, event, credit, billable)
  if redis.call('EXISTS', streamKey) == 0 then redis.call('XGROUP', 'CREATE', streamKey, GROUP, '$', 'MKSTREAM') end
  local id = redis.call('XADD', streamKey, '*', 'e', event, 'c', credit, 'b', billable)
  for _ = 1, 100 do
    local got = redis.call('XREADGROUP', 'GROUP', GROUP, consumer, 'COUNT', 1, 'STREAMS', streamKey, '>')
    if not got or got[1][2][1][1] == id then break end
  end
  return id
end
`;

// A batch of calls of one bucket (RedisSpendStore.settleBatch): each call as a settle of its own would decide it, in
// order, over a running balance per org; the holds and pending spend moved once per org and per key; the settled
// calls appended as one stream entry (records joined by newlines, their splits by commas).
export const SETTLE = `${HELPERS}
local streamKey, resvKey = KEYS[1], KEYS[2] -- KEYS[3..]: the batch's orgs, keys, days, idempotency and seen keys
local consumer, idemTtl, n = ARGV[1], ARGV[2], tonumber(ARGV[3])
local FIELDS = 12 -- per call: price, member, org, idem, head, middle, tail, seen, seen hash, event, lease, held count
local orgs, orgOrder, held, heldOrder = {}, {}, {}, {}
local leases, leaseOrder = {}, {}
local events, credits, billables, out = {}, {}, {}, {}
local a = 3
for i = 1, n do
  local price = tonumber(ARGV[a + 1])
  local member = ARGV[a + 2]
  local orgIdx = tonumber(ARGV[a + 3])
  local idemIdx = tonumber(ARGV[a + 4]) -- 0: no replay record
  local seenIdx = tonumber(ARGV[a + 8]) -- 0: no seen set
  local event = ARGV[a + 10]
  local leaseIdx = tonumber(ARGV[a + 11]) -- 0: the call's own reservation (member); else its lease's hash
  local nHeld = tonumber(ARGV[a + 12])
  local firstHeld = a + FIELDS
  local o = orgs[orgIdx]
  if not o then
    o = {count = 0, delta = 0}
    orgs[orgIdx] = o
    orgOrder[#orgOrder + 1] = orgIdx
  end
  local open, credit, billable = true, 0, 0
  if price > 0 then
    if leaseIdx > 0 then
      -- The lease still holds the call's price (it is not swept): the price leaves the lease's remainder, summed per
      -- lease and moved once below (the script is atomic, so a lease open for one of its calls is open for all).
      local l = leases[leaseIdx]
      if not l then
        l = {open = redis.call('HEXISTS', KEYS[leaseIdx], 'rem') == 1, spent = 0}
        leases[leaseIdx] = l
        leaseOrder[#leaseOrder + 1] = leaseIdx
      end
      open = l.open
      if open then l.spent = l.spent + price end
    else
      open = redis.call('ZREM', resvKey, member) == 1
    end
    if open then
      if not o.mode then
        local h = redis.call('HMGET', KEYS[orgIdx], 'bal', 'mode', 'pend')
        o.avail = tonumber(h[1] or '0') - tonumber(h[3] or '0')
        o.mode = h[2] or ''
      end
      credit, billable = chargeCall(price, o.avail, o.mode)
      o.avail = o.avail - price
      o.delta = o.delta + price
      for j = 1, nHeld do
        local k = tonumber(ARGV[firstHeld + j])
        if not held[k] then
          held[k] = 0
          heldOrder[#heldOrder + 1] = k
        end
        held[k] = held[k] + price
      end
    end
  end
  if open then
    o.count = o.count + 1
    events[#events + 1] = event
    credits[#credits + 1] = credit
    billables[#billables + 1] = billable
    if idemIdx > 0 then
      redis.call('SET', KEYS[idemIdx], ARGV[a + 5] .. credit .. ARGV[a + 6] .. billable .. ARGV[a + 7], 'PX', idemTtl)
      if seenIdx > 0 then redis.call('SADD', KEYS[seenIdx], ARGV[a + 9]) end
    end
    out[i] = credit .. ':' .. billable
  else
    out[i] = 'gone'
  end
  a = firstHeld + nHeld
end
for _, k in ipairs(orgOrder) do
  local o = orgs[k]
  if o.delta > 0 then
    add({KEYS[k]}, 'res', -o.delta)
    redis.call('HINCRBY', KEYS[k], 'pend', o.delta)
  end
  if o.count > 0 then redis.call('HINCRBY', KEYS[k], 'pn', o.count) end
end
for _, k in ipairs(leaseOrder) do
  local l = leases[k]
  if l.spent > 0 then redis.call('HINCRBY', KEYS[k], 'rem', -l.spent) end
end
for _, k in ipairs(heldOrder) do
  add({KEYS[k]}, 'res', -held[k])
  redis.call('HINCRBY', KEYS[k], 'pend', held[k])
end
local id = ''
if #events > 0 then
  id = append(streamKey, consumer, table.concat(events, '\\n'), table.concat(credits, ','), table.concat(billables, ','))
end
local reply = {id}
for i = 1, n do reply[i + 1] = out[i] end
return reply
`;

export const VOID = `${HELPERS}
local orgKey, keyKey, dayKey, resvKey, idemKey, streamKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local leaseKey = KEYS[7] -- the lease's hash, when the reservation is a lease
local FIRST_ANCESTOR = 8 -- KEYS[8..]: the ancestors' keys, then their days
local price = tonumber(ARGV[1])
local member = ARGV[2]
local hasIdem = ARGV[3] == '1'
local reservationId = ARGV[4]
local failedEvent = ARGV[5] -- the failed call's usage event ('' = none)
local consumer = ARGV[6]

local open = 0
if string.sub(reservationId, 1, 6) == 'lease_' then
  -- A lease nobody returned (its gateway died or stopped): what remains of it is released, and the calls it admitted
  -- that have not settled yet find it gone (answered 503, not charged).
  open = redis.call('ZREM', resvKey, member)
  local l = redis.call('HMGET', leaseKey, 'rem', 'live')
  redis.call('DEL', leaseKey)
  if open == 1 and l[1] then
    local held = {orgKey, keyKey, dayKey}
    for i = FIRST_ANCESTOR, #KEYS do held[#held + 1] = KEYS[i] end
    local rem = tonumber(l[1])
    if rem > 0 then add(held, 'res', -rem) end -- (never -0: HINCRBY refuses it)
    if l[2] == '1' then add({orgKey}, 'ls', -1) end
  end
  return {open, ''}
end
if price > 0 then
  open = redis.call('ZREM', resvKey, member)
  if open == 1 then
    local held = {orgKey, keyKey, dayKey}
    for i = FIRST_ANCESTOR, #KEYS do held[#held + 1] = KEYS[i] end
    add(held, 'res', -price)
  end
end
if hasIdem then
  local rec = redis.call('GET', idemKey)
  if rec and string.sub(rec, 1, 1) == 'p' and string.sub(rec, -#reservationId) == reservationId then
    redis.call('DEL', idemKey)
  end
end
local id = ''
if failedEvent ~= '' then
  redis.call('HINCRBY', orgKey, 'pn', 1)
  id = append(streamKey, consumer, failedEvent, 0, 0)
end
return {open, id}
`;

// Postgres has these entries' calls (one bucket's). Each entry acknowledged here (once, whoever acks it again) releases
// what its calls held: the releases of all such entries are summed per key and field and applied once each. Then
// Postgres's totals after the commits are merged in (newer balance versions only, spend only grows), one per key.
export const ACK = `${HELPERS}
local streamKey = KEYS[1] -- KEYS[2..]: the orgs, keys and days named below
local a = 1
local nEntries = tonumber(ARGV[a])
local totals, order = {}, {}
for _ = 1, nEntries do
  local id, nRel = ARGV[a + 1], tonumber(ARGV[a + 2])
  local acked = redis.call('XACK', streamKey, GROUP, id) == 1
  if acked then redis.call('XDEL', streamKey, id) end
  for j = 0, nRel - 1 do
    local r = a + 3 + j * 3 -- key index, field ('pend' or 'pn'), amount
    if acked then
      local slot = ARGV[r] .. ' ' .. ARGV[r + 1]
      if not totals[slot] then
        totals[slot] = 0
        order[#order + 1] = {tonumber(ARGV[r]), ARGV[r + 1], slot}
      end
      totals[slot] = totals[slot] + tonumber(ARGV[r + 2])
    end
  end
  a = a + 2 + nRel * 3
end
for _, o in ipairs(order) do
  local key, field = KEYS[o[1]], o[2]
  if redis.call('HEXISTS', key, field) == 1 then add({key}, field, -totals[o[3]]) end
end
local nBal = tonumber(ARGV[a + 1])
a = a + 1
for _ = 1, nBal do
  local orgKey, balance, version = KEYS[tonumber(ARGV[a + 1])], ARGV[a + 2], ARGV[a + 3]
  local b = redis.call('HMGET', orgKey, 'mode', 'ver')
  if b[1] and tonumber(version) > tonumber(b[2] or '-1') then
    redis.call('HSET', orgKey, 'bal', balance, 'ver', version)
  end
  a = a + 3
end
local nSpent = tonumber(ARGV[a + 1])
a = a + 1
for _ = 1, nSpent do
  local key, spent = KEYS[tonumber(ARGV[a + 1])], ARGV[a + 2]
  local sp = redis.call('HGET', key, 'sp')
  if sp and tonumber(spent) > tonumber(sp) then redis.call('HSET', key, 'sp', spent) end
  a = a + 2
end
return 1
`;

// Entries a drainer took and has not acknowledged for a while (it died, or Postgres was down): now this one's.
export const CLAIM = `
local streamKey = KEYS[1]
local consumer, minIdle, count = ARGV[1], ARGV[2], ARGV[3]
if redis.call('EXISTS', streamKey) == 0 then return {} end
local claimed = redis.call('XAUTOCLAIM', streamKey, 'drain', consumer, minIdle, '0-0', 'COUNT', count)
return claimed[2]
`;

export const HYDRATE = `${NOW_MS}
local orgKey, keyKey, dayKey = KEYS[1], KEYS[2], KEYS[3]
local FIRST_ANCESTOR = 4 -- KEYS[4..]: the ancestors' keys, then their days (KEYS[i + n])
local n = (#KEYS - FIRST_ANCESTOR + 1) / 2
local balance = ARGV[1]
local version = ARGV[2]
local mode = ARGV[3]
local suspended = ARGV[4]
local now = nowMs(ARGV[5]) -- the balance's age is read on Redis's clock (ARGV[5]: the test offset)
local hasKey = ARGV[6] == '1'
local keySpent = ARGV[7]
local daySpent = ARGV[8]
local dayTtl = ARGV[9]
local creditLimit = ARGV[10]
local generation = ARGV[11] -- '' = any
-- ARGV[i + ANCESTOR_SPENT]: spend of the ancestor at KEYS[i], or the day spend of the ancestor's day at KEYS[i]
local ANCESTOR_SPENT = 12 - FIRST_ANCESTOR

if tonumber(version) >= tonumber(redis.call('HGET', orgKey, 'ver') or '-1') then
  redis.call('HSET', orgKey, 'bal', balance, 'ver', version)
end
if generation == '' or generation == (redis.call('HGET', orgKey, 'gen') or '0') then
  redis.call('HSET', orgKey, 'mode', mode, 'susp', suspended, 't', now, 'lim', creditLimit)
end
if hasKey then
  local sp = redis.call('HGET', keyKey, 'sp')
  if not sp or tonumber(keySpent) > tonumber(sp) then redis.call('HSET', keyKey, 'sp', keySpent) end
  local dsp = redis.call('HGET', dayKey, 'sp')
  if not dsp or tonumber(daySpent) > tonumber(dsp) then redis.call('HSET', dayKey, 'sp', daySpent) end
  redis.call('PEXPIRE', dayKey, dayTtl)
  for i = FIRST_ANCESTOR, #KEYS do
    local spent = ARGV[i + ANCESTOR_SPENT]
    local asp = redis.call('HGET', KEYS[i], 'sp')
    if not asp or tonumber(spent) > tonumber(asp) then redis.call('HSET', KEYS[i], 'sp', spent) end
    if i >= FIRST_ANCESTOR + n then redis.call('PEXPIRE', KEYS[i], dayTtl) end
  end
end
return 1
`;

// A key of the org changed: a new key version (cached copies are stale at their next admission).
export const KEYS_CHANGED = `${NOW_MS}${KEY_VERSION}
redis.call('HSET', KEYS[1], 'kv', KEY_VERSION())
return 1
`;

// A new generation, and the flags gone: the next admission reads Postgres.
export const FORGET = `
local orgKey = KEYS[1]
redis.call('HINCRBY', orgKey, 'gen', 1)
redis.call('HDEL', orgKey, 'mode', 't')
return 1
`;

// The bucket's reservations past their expiry on this server's clock (the clock the admission scored them by).
export const EXPIRED = `${NOW_MS}
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', nowMs(ARGV[2]), 'LIMIT', 0, tonumber(ARGV[1]))
`;

// A rebuild of the org's seen set starts: its epoch, created when missing (ARGV[1]: a random suffix). A data loss
// (FLUSHDB, a restart without data, a failover that lost writes) removes it with the set and the stamp.
export const SEEN_EPOCH = `${NOW_MS}
local ep = redis.call('HGET', KEYS[1], 'ep')
if ep then return ep end
ep = nowMs(0) .. '.' .. ARGV[1]
redis.call('HSET', KEYS[1], 'ep', ep)
return ep
`;

// The rebuild added every key Postgres had booked: the set is complete, unless its data was lost meanwhile (the epoch
// read before the Postgres read is gone or replaced).
export const SEEN_COMPLETE = `
if redis.call('HGET', KEYS[1], 'ep') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'ok', '1')
return 1
`;

/**
 * A lease (core/spend/leases.ts): the admission of many calls at once for one (org, key, UTC day). The same checks as
 * ADMIT (key version, hydration, suspension, per-call maximum, every budget and daily cap, the balance or credit
 * limit, the rate limit), but instead of one call's price it holds up to `want` cents (at most half of what the
 * tightest limit leaves, so other processes keep room) and up to `tokens` calls of the rate window. When the slack is
 * under `minCalls` calls' worth, the org is being recalled, or anything would refuse, the answer is `exact`: the
 * caller admits call by call with ADMIT, exactly as without leases. The hold is an open reservation (swept after its
 * expiry if its process dies) whose amount lives in the lease's hash (`rem`), so calls settle against it.
 */
export const LEASE = `${NOW_MS}${KEY_VERSION}
local orgKey, keyKey, dayKey, rateKey, resvKey, leaseKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local FIRST_ANCESTOR = 7 -- KEYS[7..]: the n ancestors' keys, then each one's day
local n = (#KEYS - FIRST_ANCESTOR + 1) / 2
local price = tonumber(ARGV[1])
local budget = tonumber(ARGV[2]) -- -1: none
local dailyCap = tonumber(ARGV[3]) -- -1: none
local rateLimit = tonumber(ARGV[4])
local windowMs = ARGV[5]
local now = nowMs(ARGV[6])
local holdTtl = tonumber(ARGV[7]) -- the admission window + the upstream deadline + a margin
local staleMs = tonumber(ARGV[8])
local member = ARGV[9]
local perCallMax = tonumber(ARGV[10]) -- -1: none
local keyVersion = ARGV[11]
local want = tonumber(ARGV[12]) -- cents wanted
local wantTokens = tonumber(ARGV[13]) -- calls wanted
local minCalls = tonumber(ARGV[14])
local FIRST_LIMIT = 14 -- ARGV[FIRST_LIMIT + j]: the j-th ancestor's budget, ARGV[FIRST_LIMIT + n + j]: its daily cap

local function committed(h) return tonumber(h[1]) + tonumber(h[2] or '0') + tonumber(h[3] or '0') end

local o = redis.call('HMGET', orgKey, 'bal', 'mode', 'susp', 'res', 't', 'lim', 'gen', 'pend', 'kv', 'rc')
local staleKey = checkKeyVersion(orgKey, o[9], keyVersion)
if staleKey then return {'stale_key', staleKey} end
local gen = o[7] or '0'
if not o[1] or not o[2] then return {'hydrate', gen} end
if o[3] == '1' then return {'exact'} end
if o[10] and now - tonumber(o[10]) < 2000 then return {'exact'} end
local held = {orgKey, keyKey, dayKey}
local slack = math.huge
if price > 0 then
  if perCallMax >= 0 and price > perCallMax then return {'exact'} end
  local k = redis.call('HMGET', keyKey, 'sp', 'res', 'pend')
  local d = redis.call('HMGET', dayKey, 'sp', 'res', 'pend')
  if not k[1] or not d[1] then return {'hydrate'} end
  if budget >= 0 then slack = math.min(slack, budget - committed(k)) end
  if dailyCap >= 0 then slack = math.min(slack, dailyCap - committed(d)) end
  for j = 1, n do
    local a = redis.call('HMGET', KEYS[FIRST_ANCESTOR + j - 1], 'sp', 'res', 'pend')
    local ad = redis.call('HMGET', KEYS[FIRST_ANCESTOR + n + j - 1], 'sp', 'res', 'pend')
    if not a[1] or not ad[1] then return {'hydrate'} end
    local b, c = tonumber(ARGV[FIRST_LIMIT + j]), tonumber(ARGV[FIRST_LIMIT + n + j])
    if b >= 0 then slack = math.min(slack, b - committed(a)) end
    if c >= 0 then slack = math.min(slack, c - committed(ad)) end
    held[#held + 1] = KEYS[FIRST_ANCESTOR + j - 1]
    held[#held + 1] = KEYS[FIRST_ANCESTOR + n + j - 1]
  end
  local headroom = tonumber(o[1]) - tonumber(o[4] or '0') - tonumber(o[8] or '0')
  if o[2] == 'card' then headroom = headroom + tonumber(o[6] or '0') end
  slack = math.min(slack, headroom)
  if slack < minCalls * price then return {'exact'} end
end
-- Rate tokens: under 32 calls of room in the window, call by call too; else at most half the room.
local used = tonumber(redis.call('GET', rateKey) or '0')
if rateLimit - used < minCalls then return {'exact'} end
local tokens = math.min(wantTokens, math.floor((rateLimit - used) / 2))
if redis.call('INCRBY', rateKey, tokens) == tokens then redis.call('PEXPIRE', rateKey, windowMs) end
local grant = 0
if price > 0 then
  grant = math.min(want, math.floor(slack / 2))
  redis.call('ZADD', resvKey, now + holdTtl, member)
  for _, key in ipairs(held) do redis.call('HINCRBY', key, 'res', grant) end
  redis.call('HSET', leaseKey, 'rem', grant, 'live', 1)
  redis.call('PEXPIRE', leaseKey, holdTtl + 60000)
  redis.call('HINCRBY', orgKey, 'ls', 1)
end
local stale = '0'
if now - tonumber(o[5] or '0') > staleMs then stale = '1' end
return {'lease', tostring(grant), tostring(tokens), stale, gen}
`;

/**
 * A lease's admission window ended: what its calls still in flight need (`keep`) stays held, the rest is released;
 * with `keep` 0 the lease is gone. Unused rate tokens go back to their window. Idempotent: a lease already returned
 * or swept releases nothing.
 */
export const LEASE_RETURN = `
local orgKey, resvKey, leaseKey, rateKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local FIRST_HELD = 5 -- KEYS[5..]: the key, its day, the ancestors and their days
local member = ARGV[1]
local keep = tonumber(ARGV[2])
local unusedTokens = tonumber(ARGV[3])
if unusedTokens > 0 and redis.call('EXISTS', rateKey) == 1 then
  if redis.call('DECRBY', rateKey, unusedTokens) < 0 then redis.call('SET', rateKey, 0, 'KEEPTTL') end
end
local l = redis.call('HMGET', leaseKey, 'rem', 'live')
if not l[1] then return 0 end
local release = tonumber(l[1]) - keep
if release < 0 then release = 0 end
local held = {orgKey}
for i = FIRST_HELD, #KEYS do held[#held + 1] = KEYS[i] end
if release > 0 then -- (never -0: HINCRBY refuses it)
  for _, key in ipairs(held) do
    if redis.call('HINCRBY', key, 'res', -release) < 0 then redis.call('HSET', key, 'res', 0) end
  end
end
if l[2] == '1' then
  redis.call('HINCRBY', orgKey, 'ls', -1)
  if tonumber(redis.call('HGET', orgKey, 'ls')) < 0 then redis.call('HSET', orgKey, 'ls', 0) end
end
if keep <= 0 then
  redis.call('ZREM', resvKey, member)
  redis.call('DEL', leaseKey)
else
  -- What stays held: never more than the lease still had (calls settled meanwhile already took their price from it).
  redis.call('HSET', leaseKey, 'rem', tonumber(l[1]) - release, 'live', 0)
end
return release
`;
