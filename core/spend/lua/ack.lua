-- ACK (RedisSpendStore.ackUsage, spAck): Postgres has these entries' calls (one stream's). Each entry acknowledged here
-- (once, whoever acks it again) releases what its calls held: the releases of all such entries are summed per key and
-- field. Postgres's totals after the commits are merged in (newer balance versions only, spend only grows). Each key
-- is then read once and written once.
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
-- Everything this ack changes, per key (in order of first mention): each key is read once (HMGET) and written once
-- (HSET), whatever mix of releases, balance and spend it gets (issue 32: at a thousand keys a call's key and day are
-- each their own keys, and four commands per key were most of a call's Redis work).
local perKey, keyOrder = {}, {}
local function of(index)
  local k = perKey[index]
  if not k then
    k = {rel = {}, relOrder = {}}
    perKey[index] = k
    keyOrder[#keyOrder + 1] = index
  end
  return k
end
local a = 1
local nEntries = tonumber(ARGV[a])
for _ = 1, nEntries do
  local id, nRel = ARGV[a + 1], tonumber(ARGV[a + 2])
  local acked = redis.call('XACK', streamKey, GROUP, id) == 1
  if acked then redis.call('XDEL', streamKey, id) end
  for j = 0, nRel - 1 do
    local r = a + 3 + j * 3 -- key index, field ('pend' or 'pn'), amount
    if acked then
      local k, field = of(tonumber(ARGV[r])), ARGV[r + 1]
      if not k.rel[field] then
        k.rel[field] = 0
        k.relOrder[#k.relOrder + 1] = field
      end
      k.rel[field] = k.rel[field] + tonumber(ARGV[r + 2])
    end
  end
  a = a + 2 + nRel * 3
end
local nBal = tonumber(ARGV[a + 1])
a = a + 1
for _ = 1, nBal do
  of(tonumber(ARGV[a + 1])).bal = {ARGV[a + 2], tonumber(ARGV[a + 3])} -- balance, its version
  a = a + 3
end
local nSpent = tonumber(ARGV[a + 1])
a = a + 1
for _ = 1, nSpent do
  of(tonumber(ARGV[a + 1])).sp = ARGV[a + 2]
  a = a + 2
end
for _, index in ipairs(keyOrder) do
  local key, k = KEYS[index], perKey[index]
  local fields = {}
  for _, field in ipairs(k.relOrder) do fields[#fields + 1] = field end
  local spAt, balAt = 0, 0
  if k.sp then
    fields[#fields + 1] = 'sp'
    spAt = #fields
  end
  if k.bal then
    fields[#fields + 1] = 'mode'
    fields[#fields + 1] = 'ver'
    balAt = #fields - 1
  end
  local got = redis.call('HMGET', key, unpack(fields))
  local set = {}
  -- A release moves a hold or pending spend down, never below zero, and only where the field exists (a key forgotten
  -- by the fast state is not recreated by its acks).
  for i, field in ipairs(k.relOrder) do
    if got[i] then
      local left = tonumber(got[i]) - k.rel[field]
      set[#set + 1] = field
      set[#set + 1] = left < 0 and '0' or string.format('%d', left)
    end
  end
  -- Spend only grows, on a key the fast state holds.
  if spAt > 0 and got[spAt] and tonumber(k.sp) > tonumber(got[spAt]) then
    set[#set + 1] = 'sp'
    set[#set + 1] = k.sp
  end
  -- Postgres's balance, when it is newer than the one held (an org the fast state holds).
  if balAt > 0 and got[balAt] and k.bal[2] > tonumber(got[balAt + 1] or '-1') then
    set[#set + 1] = 'bal'
    set[#set + 1] = k.bal[1]
    set[#set + 1] = 'ver'
    set[#set + 1] = k.bal[2]
  end
  if #set > 0 then redis.call('HSET', key, unpack(set)) end
end
return 1
