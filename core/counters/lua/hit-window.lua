-- HIT_WINDOW (RedisCounterStore.hitWindow, the `hitWindow` command): one hit on a fixed-window counter. Refused hits
-- are not counted.
--
-- KEYS[1] key       the window's counter
-- ARGV[1] limit     hits allowed in the window
-- ARGV[2] windowMs  the window's length (the counter's expiry, set by the first hit or when it has none)
--
-- Reply: {allowed (1 or 0), count, ms until the window resets}.
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
local limit = tonumber(ARGV[1])
local ttl = redis.call('PTTL', KEYS[1])
if count >= limit then
  if ttl < 0 then ttl = tonumber(ARGV[2]) end
  return {0, count, ttl}
end
count = redis.call('INCR', KEYS[1])
if count == 1 or ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
end
return {1, count, ttl}
