-- Include (core/redis-lua.ts): nowMs(offset), milliseconds on the Redis server's clock plus the caller's test offset
-- (RedisSpendStore: a ManualClock's lead over the wall clock; always 0 in production, whatever the gateway machine's
-- own clock says). Every deadline two processes compare (a reservation's expiry, a balance's age) is read from Redis's
-- own clock (`TIME`, allowed in scripts since Redis 5's effects replication), so gateways whose clocks disagree still
-- agree on when a reservation expires: the sweeper of one cannot void another's live reservation.
local function nowMs(offset)
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(offset)
end
