-- LEASE (RedisSpendStore.lease, spLease; core/spend/leases.ts): the admission of many calls at once for one (org, key,
-- UTC day). The same checks as ADMIT (key version, hydration, suspension, per-call maximum, every budget and daily
-- cap, the balance or credit limit, the rate limit), but instead of one call's price it holds up to `want` cents (at
-- most half of what the tightest limit leaves, so other processes keep room) and up to `wantTokens` calls of the rate
-- window. When the slack is under `minCalls` calls' worth, the org is being recalled, or anything would refuse, the
-- answer is 'exact': the caller admits call by call with ADMIT, exactly as without leases. The hold is an open
-- reservation (swept after its expiry if its process dies) whose amount lives in the lease's hash (`rem`), so calls
-- settle against it.
--
-- KEYS[1] orgKey    the org's hash
-- KEYS[2] keyKey    the key's spend
-- KEYS[3] dayKey    the key's day
-- KEYS[4] rateKey   the rate window's counter
-- KEYS[5] resvKey   the bucket's reservation set
-- KEYS[6] leaseKey  the lease's hash (rem, live)
-- KEYS[7 .. 6+n]    the ancestors' keys; KEYS[7+n .. 6+2n] their days
-- ARGV[1]  price       cents per call
-- ARGV[2]  budget      the key's budget (-1: none)
-- ARGV[3]  dailyCap    the key's daily cap (-1: none)
-- ARGV[4]  rateLimit   calls per window
-- ARGV[5]  windowMs
-- ARGV[6]  offset      the test clock offset (nowMs)
-- ARGV[7]  holdTtl     the admission window + the upstream deadline + a margin
-- ARGV[8]  staleMs
-- ARGV[9]  member      the lease's reservation (memberOf)
-- ARGV[10] perCallMax  (-1: none)
-- ARGV[11] keyVersion  the caller's cached key version ('' = no check)
-- ARGV[12] want        cents wanted
-- ARGV[13] wantTokens  calls wanted
-- ARGV[14] minCalls
-- ARGV[15] kind        '': the key's own lease; 'shared': the org's lease for its keys without governance of their
--                      own (the org's money only: no rate tokens, nothing held on the key, which has no cap to hold
--                      against); 'tokens': the key's rate tokens only (price 0), and `hydrate` while the key's or
--                      its day's spend is not here (the shared lease's calls add to them when they settle)
-- ARGV[15+j]           the j-th ancestor's budget; ARGV[15+n+j] its daily cap (-1: none)
--
-- Reply: {'lease', cents granted, tokens granted, stale ('1' or '0'), gen}; {'hydrate', gen?};
-- {'stale_key', version}; {'exact'}.
-- include: now-ms.lua
-- include: key-version.lua
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
local kind = ARGV[15]
local FIRST_LIMIT = 15 -- ARGV[FIRST_LIMIT + j]: the j-th ancestor's budget, ARGV[FIRST_LIMIT + n + j]: its daily cap

local function committed(h) return tonumber(h[1]) + tonumber(h[2] or '0') + tonumber(h[3] or '0') end

local o = redis.call('HMGET', orgKey, 'bal', 'mode', 'susp', 'res', 't', 'lim', 'gen', 'pend', 'kv', 'rc')
local staleKey = checkKeyVersion(orgKey, o[9], keyVersion)
if staleKey then return {'stale_key', staleKey} end
local gen = o[7] or '0'
if not o[1] or not o[2] then return {'hydrate', gen} end
if o[3] == '1' then return {'exact'} end
if o[10] and now - tonumber(o[10]) < 2000 then return {'exact'} end
local shared = kind == 'shared'
local held = shared and {orgKey} or {orgKey, keyKey, dayKey}
local slack = math.huge
if kind == 'tokens' and (not redis.call('HGET', keyKey, 'sp') or not redis.call('HGET', dayKey, 'sp')) then
  return {'hydrate'}
end
if price > 0 and shared then
  local headroom = tonumber(o[1]) - tonumber(o[4] or '0') - tonumber(o[8] or '0')
  if o[2] == 'card' then headroom = headroom + tonumber(o[6] or '0') end
  slack = headroom
  if slack < minCalls * price then return {'exact'} end
elseif price > 0 then
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
-- Rate tokens: under 32 calls of room in the window, call by call too; else at most half the room. (None for the
-- shared lease: its calls take their key's tokens from a `tokens` lease.)
local tokens = 0
if not shared then
  local used = tonumber(redis.call('GET', rateKey) or '0')
  if rateLimit - used < minCalls then return {'exact'} end
  tokens = math.min(wantTokens, math.floor((rateLimit - used) / 2))
  if redis.call('INCRBY', rateKey, tokens) == tokens then redis.call('PEXPIRE', rateKey, windowMs) end
end
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
