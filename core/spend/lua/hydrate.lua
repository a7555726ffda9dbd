-- HYDRATE (RedisSpendStore.hydrate, spHydrate): Postgres's view of an org (and of a key, its day and its ancestors)
-- written into Redis: the balance when its version is not older, the flags when the generation still matches, spend
-- totals only upwards.
--
-- KEYS[1] orgKey  the org's hash
-- KEYS[2] keyKey  the key's spend
-- KEYS[3] dayKey  the key's day
-- KEYS[4 .. 3+n]  the ancestors' keys; KEYS[4+n .. 3+2n] their days
-- ARGV[1]  balance      cents
-- ARGV[2]  version      the balance's version
-- ARGV[3]  mode         billing mode
-- ARGV[4]  suspended    '1' or '0'
-- ARGV[5]  offset       the test clock offset (the balance's age is read on Redis's clock)
-- ARGV[6]  hasKey       '1' when the key's spend is given
-- ARGV[7]  keySpent
-- ARGV[8]  daySpent
-- ARGV[9]  dayTtl       ms a day hash is kept
-- ARGV[10] creditLimit
-- ARGV[11] generation   the org's generation read before Postgres ('' = any)
-- ARGV[12 .. 11+2n]     each ancestor's spend, then each ancestor's day spend (in KEYS order)
--
-- Reply: 1.
-- include: now-ms.lua
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
