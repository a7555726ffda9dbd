-- FORGET (RedisSpendStore.forgetOrg, spForget): a new generation, and the flags gone: the next admission reads
-- Postgres.
--
-- KEYS[1] orgKey  the org's hash (sp:{b}:o:ORG)
--
-- Reply: 1.
local orgKey = KEYS[1]
redis.call('HINCRBY', orgKey, 'gen', 1)
redis.call('HDEL', orgKey, 'mode', 't')
return 1
