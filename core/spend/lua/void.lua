-- VOID (RedisSpendStore.void and fail, spVoid): release a reservation's hold on the org, the key, its day and each
-- ancestor and its day (never below zero), drop its in-flight idempotency claim, and for a failed call append its
-- usage event (uncharged). A lease's reservation (reservationId 'lease_...') nobody returned (its gateway died or
-- stopped): what remains of it is released, and the calls it admitted that have not settled yet find it gone.
--
-- KEYS[1] orgKey     the org's hash
-- KEYS[2] keyKey     the key's spend
-- KEYS[3] dayKey     the key's day
-- KEYS[4] resvKey    the bucket's reservation set
-- KEYS[5] idemKey    the idempotency record
-- KEYS[6] streamKey  the bucket's usage stream
-- KEYS[7] leaseKey   the lease's hash (read only when the reservation is a lease)
-- KEYS[8..]          the ancestors' keys, then their days
-- ARGV[1] price          cents
-- ARGV[2] member         the reservation (memberOf)
-- ARGV[3] hasIdem        '1' when the call has an idempotency key
-- ARGV[4] reservationId
-- ARGV[5] failedEvent    the failed call's usage event ('' = none)
-- ARGV[6] consumer       this process's name in the consumer group
--
-- Reply: {open (1 when the reservation was still open), entry id ('' when none was appended)}.
-- include: helpers.lua
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
    -- The org's shared lease (its member names no key) held the org only.
    local held = {orgKey, keyKey, dayKey}
    if string.match(member, '^[^|]*|[^|]*|([^|]*)|') == '' then held = {orgKey} end
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
