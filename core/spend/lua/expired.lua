-- EXPIRED (RedisSpendStore.expired, spExpired): the bucket's reservations past their expiry on this server's clock (the
-- clock the admission scored them by).
--
-- KEYS[1] resvKey  the bucket's reservation set (sp:{b}:resv, scored by expiry)
-- ARGV[1] limit    at most this many members
-- ARGV[2] offset   the test clock offset (nowMs)
--
-- Reply: the expired members (the reservations, as memberOf writes them).
-- include: now-ms.lua
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', nowMs(ARGV[2]), 'LIMIT', 0, tonumber(ARGV[1]))
