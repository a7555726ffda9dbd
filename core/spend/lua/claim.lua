-- CLAIM (RedisSpendStore.claimUsage, spClaim): entries a drainer took and has not acknowledged for a while (it died, or
-- Postgres was down) become this one's.
--
-- KEYS[1] streamKey  the bucket's usage stream (sp:{b}:u)
-- ARGV[1] consumer   this process's name in the consumer group 'drain'
-- ARGV[2] minIdle    ms an entry has been pending before it can be claimed
-- ARGV[3] count      at most this many entries
--
-- Reply: the claimed entries as XAUTOCLAIM gives them ({id, fields} each; fields nil when deleted meanwhile), or {}
-- when the stream does not exist.
local streamKey = KEYS[1]
local consumer, minIdle, count = ARGV[1], ARGV[2], ARGV[3]
if redis.call('EXISTS', streamKey) == 0 then return {} end
local claimed = redis.call('XAUTOCLAIM', streamKey, 'drain', consumer, minIdle, '0-0', 'COUNT', count)
return claimed[2]
