-- Include (core/redis-lua.ts) of SETTLE, VOID and ACK: chargeCall (charge-call.lua); GROUP, the usage streams'
-- consumer group; add(keys, field, by), which moves a hold or pending spend on each key and never below zero; and
-- append(streamKey, consumer, event, credit, billable), which appends a usage stream entry and delivers it to this
-- drainer in the same step.
-- include: ../../money/lua/charge-call.lua
local GROUP = 'drain'
local function add(keys, field, by)
  for _, key in ipairs(keys) do
    if redis.call('HINCRBY', key, field, by) < 0 then redis.call('HSET', key, field, 0) end
  end
end
-- Append a usage event and deliver it to this consumer at once (its pending list is the drainer's claim ticket).
-- The consumer group is made on first use only (no existence check per append): a stream without the group (new, or
-- lost with the fast state) answers NOGROUP, and the group is then created from the stream's start, so entries that
-- were never delivered are delivered now (to this drainer; the loop below reads up to its own).
local function append(streamKey, consumer, event, credit, billable)
  local id = redis.call('XADD', streamKey, '*', 'e', event, 'c', credit, 'b', billable)
  for _ = 1, 100 do
    local got = redis.pcall('XREADGROUP', 'GROUP', GROUP, consumer, 'COUNT', 1, 'STREAMS', streamKey, '>')
    if type(got) == 'table' and got.err then
      redis.call('XGROUP', 'CREATE', streamKey, GROUP, '0')
      got = redis.call('XREADGROUP', 'GROUP', GROUP, consumer, 'COUNT', 1, 'STREAMS', streamKey, '>')
    end
    if not got or got[1][2][1][1] == id then break end
  end
  return id
end
