-- SEEN_COMPLETE (RedisSpendStore.completeSeen, spSeenComplete): the rebuild added every key Postgres had booked: the
-- set is stamped complete, unless its data was lost meanwhile (the epoch read before the Postgres read is gone or
-- replaced).
--
-- KEYS[1] seenStateKey  the org's seen-set state (sp:{b}:sx:ORG)
-- ARGV[1] epoch         the epoch SEEN_EPOCH returned before the rebuild
--
-- Reply: 1 when stamped, 0 when the epoch changed.
if redis.call('HGET', KEYS[1], 'ep') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'ok', '1')
return 1
