-- ACK (RedisSpendStore.ackUsage, spAck): Postgres has these entries' calls (one bucket's). Each entry acknowledged here
-- (once, whoever acks it again) releases what its calls held: the releases of all such entries are summed per key and
-- field and applied once each. Then Postgres's totals after the commits are merged in (newer balance versions only,
-- spend only grows), one per key.
--
-- KEYS[1] streamKey  the bucket's usage stream
-- KEYS[2..]          the orgs, keys and days named below by index
-- ARGV, in order (built by ackArgs in redis-spend-store.ts):
--   nEntries; per entry: its id, nRel, then nRel triples (KEYS index, field 'pend' or 'pn', amount);
--   nBal; nBal triples (org's KEYS index, balance, balance version);
--   nSpent; nSpent pairs (key's or day's KEYS index, spent).
--
-- Reply: 1.
-- include: helpers.lua
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
