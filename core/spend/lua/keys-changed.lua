-- KEYS_CHANGED (RedisSpendStore.keysChanged, spKeysChanged): a key of the org changed: a new key version (cached copies
-- are stale at their next admission).
--
-- KEYS[1] orgKey  the org's hash (sp:{b}:o:ORG)
--
-- Reply: 1.
-- include: now-ms.lua
-- include: key-version.lua
redis.call('HSET', KEYS[1], 'kv', KEY_VERSION())
return 1
