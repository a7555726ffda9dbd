-- ADMIT (RedisSpendStore.admit, spAdmit): one call's admission. Checks the caller's key version, the idempotency
-- record, the rate limit, suspension, the per-call maximum, the key's and every ancestor's budget and daily cap, then
-- the org's balance (prepaid) or credit limit (card), and holds the price as an open reservation on the org, the key,
-- its day and each ancestor and its day. Idempotent per reservation: a second run of the same admission (ioredis
-- resending a command whose answer was lost in a reconnect) finds its own reservation, or its own in-flight claim, and
-- changes nothing.
--
-- KEYS[1] orgKey        the org's hash (sp:{b}:o:ORG: bal, mode, susp, res, t, lim, gen, pend, kv, ls, rc)
-- KEYS[2] keyKey        the key's spend (sp:{b}:k:KEY: sp, res, pend)
-- KEYS[3] dayKey        the key's spend on the UTC day (sp:{b}:d:KEY:DAY)
-- KEYS[4] rateKey       the rate window's counter
-- KEYS[5] idemKey       the idempotency record (sp:{b}:i:...)
-- KEYS[6] resvKey       the bucket's reservation set (scored by expiry)
-- KEYS[7] seenKey       the org's seen set (hashes of idempotency keys Postgres has)
-- KEYS[8] seenStateKey  the seen set's state (ep, ok)
-- KEYS[9 .. 8+n]        the n ancestors' keys, nearest first; KEYS[9+n .. 8+2n] each one's day, in the same order
-- ARGV[1]  price           cents
-- ARGV[2]  budget          the key's budget (-1: none)
-- ARGV[3]  dailyCap        the key's daily cap (-1: none)
-- ARGV[4]  rateLimit       calls per window
-- ARGV[5]  windowMs        the rate window
-- ARGV[6]  offset          the test clock offset (nowMs)
-- ARGV[7]  reservationId
-- ARGV[8]  reservationTtl  ms until the reservation expires
-- ARGV[9]  hasIdem         '1' when the call has an idempotency key
-- ARGV[10] requestHash     the request's hash (a replay must match it)
-- ARGV[11] staleMs         the balance's age past which the reply asks for a refresh
-- ARGV[12] member          the reservation as the sweeper needs it (memberOf)
-- ARGV[13] perCallMax      the key's per-call maximum (-1: none)
-- ARGV[14] keyVersion      the caller's cached key version ('' = no check)
-- ARGV[15] seenHash        the idempotency key's short hash ('' = none)
-- ARGV[16] fastPath        '1': the caller may answer a first-seen key from the seen set
-- ARGV[17] noRecall        '1': a spend refusal is the answer even while leases admit on the org
-- ARGV[17+j]               the j-th ancestor's budget; ARGV[17+n+j] its daily cap (-1: none)
--
-- Reply: {'admitted', stale ('1': refresh the balance), gen, seenCheck ('new' | 'seen' | 'unstamped' | '')} (or
-- {'admitted', '0'} for a run that found its own reservation); {'hydrate', gen?}; {'stale_key', version};
-- {'replay', record}; {'mismatch'}; {'in_flight'}; {'rate_limited', pttl}; {'suspended'}; {'per_call', key spent};
-- {'budget', ancestor position or '', spent}; {'daily_cap', ancestor position or '', spent on the day};
-- {'funds', available, key spent}; {'credit_limit', available, key spent}; {'leased'} (a spend refusal while leases
-- admit on the org: they are recalled, retry shortly). Figures are integer replies (cents).
-- include: now-ms.lua
-- include: key-version.lua
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
  -- Each refusal carries its figure (an integer reply): the spend that counts against the limit, or what is left.
  if perCallMax >= 0 and price > perCallMax then return {'per_call', committed(k)} end
  if budget >= 0 and committed(k) + price > budget then return recalled({'budget', '', committed(k)}) end
  for j = 1, n do
    local b = ancestorBudget(j)
    if b >= 0 and committed(anc[j]) + price > b then return recalled({'budget', tostring(j), committed(anc[j])}) end
  end
  if dailyCap >= 0 and committed(d) + price > dailyCap then return recalled({'daily_cap', '', committed(d)}) end
  for j = 1, n do
    local c = ancestorDailyCap(j)
    if c >= 0 and committed(ancDay[j]) + price > c then
      return recalled({'daily_cap', tostring(j), committed(ancDay[j])})
    end
  end
  local headroom = tonumber(o[1]) - tonumber(o[4] or '0') - tonumber(o[8] or '0')
  if o[2] == 'card' then
    local available = headroom + tonumber(o[6] or '0')
    if available < price then return recalled({'credit_limit', available, committed(k)}) end
  elseif headroom < price then
    return recalled({'funds', headroom, committed(k)})
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
