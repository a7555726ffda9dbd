-- LEASE_RETURN (RedisSpendStore.returnLease, spLeaseReturn): a lease's admission window ended: what its calls still in
-- flight need (`keep`) stays held, the rest is released; with `keep` 0 the lease is gone. Unused rate tokens go back
-- to their window. Idempotent: a lease already returned or swept releases nothing.
--
-- KEYS[1] orgKey    the org's hash
-- KEYS[2] resvKey   the bucket's reservation set
-- KEYS[3] leaseKey  the lease's hash
-- KEYS[4] rateKey   the rate window's counter
-- KEYS[5..]         the key, its day, the ancestors and their days
-- ARGV[1] member        the lease's reservation (memberOf)
-- ARGV[2] keep          cents still needed by calls in flight
-- ARGV[3] unusedTokens  rate tokens to give back
--
-- Reply: the cents released.
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
