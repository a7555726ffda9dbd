-- Include (core/redis-lua.ts): KEY_VERSION(), a new key version: Redis's time and a per-org counter (`kvn` in the
-- org's hash at KEYS[1]; unique even after the org's hash was lost); and checkKeyVersion(orgKey, kv, keyVersion).
-- include: now-ms.lua
local function KEY_VERSION()
  return nowMs(0) .. '.' .. redis.call('HINCRBY', KEYS[1], 'kvn', 1)
end
-- Revocations and tightened caps reach every gateway here, not only by pub/sub: the caller's cached key version
-- against the org's ('' = no check). A missing version (a new org, a flushed Redis) gets a new one, unique on this
-- server's clock, so no cached copy can match it by chance. Returns the current version when the copy is stale.
local function checkKeyVersion(orgKey, kv, keyVersion)
  if keyVersion == '' then return nil end
  if not kv then
    kv = KEY_VERSION()
    redis.call('HSET', orgKey, 'kv', kv)
  end
  if kv ~= keyVersion then return kv end
  return nil
end
