-- SEEN_EPOCH (RedisSpendStore.seenEpoch, spSeenEpoch): a rebuild of the org's seen set starts: its epoch, created when
-- missing. A data loss (FLUSHDB, a restart without data, a failover that lost writes) removes it with the set and the
-- stamp.
--
-- KEYS[1] seenStateKey  the org's seen-set state (sp:{b}:sx:ORG: ep, ok)
-- ARGV[1] suffix        a random suffix for a new epoch
--
-- Reply: the epoch (existing or new).
-- include: now-ms.lua
local ep = redis.call('HGET', KEYS[1], 'ep')
if ep then return ep end
ep = nowMs(0) .. '.' .. ARGV[1]
redis.call('HSET', KEYS[1], 'ep', ep)
return ep
