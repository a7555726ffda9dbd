-- SETTLE (RedisSpendStore.settleBatch, spSettle): a batch of calls of one bucket, or on a single Redis server of any
-- buckets (one script per batch however many orgs the calls belong to: issue 32's scale row). Each call is decided in
-- order, as a settle of its own would decide it, over a running balance per org (chargeCall); the holds and pending
-- spend move once per org and per key; the settled calls are appended as one usage stream entry (records joined by
-- newlines, their splits by commas) and delivered to this drainer.
--
-- KEYS[1] streamKey  the usage stream of the first call's bucket (sp:{b}:u)
-- KEYS[2..]          the batch's reservation sets, orgs, keys, days, idempotency records, seen sets and leases, each
--                    once, named below by index
-- ARGV[1] consumer   this process's name in the consumer group
-- ARGV[2] idemTtl    ms the idempotency records are kept
-- ARGV[3] n          the number of calls
-- Then per call, FIELDS (13) values and its held keys:
--   price; member (its reservation, '' for a leased call); resv (KEYS index of its bucket's reservation set, 0 for a
--   leased call); org (KEYS index); idem (KEYS index, 0: no replay record); head, middle, tail (the replay record
--   around its credit and billable); seen (KEYS index, 0: none); seen hash; event (the usage event); lease (KEYS
--   index, 0: the call's own reservation); held count h; then h KEYS indexes (the key, its day, the ancestors and
--   their days), negative for a call of its org's shared lease, which held nothing on them (their pending spend
--   grows, no hold moves).
--
-- Reply: {entry id ('' when nothing was appended), then per call 'credit:billable' or 'gone' (its reservation or lease
-- was swept: not charged)}.
-- include: helpers.lua
local streamKey = KEYS[1] -- KEYS[2..]: the batch's reservation sets, orgs, keys, days, idempotency and seen keys
local consumer, idemTtl, n = ARGV[1], ARGV[2], tonumber(ARGV[3])
local FIELDS = 13 -- per call: price, member, resv, org, idem, head, middle, tail, seen, seen hash, event, lease, held
local orgs, orgOrder, held, heldOrder = {}, {}, {}, {}
local pendOnly, pendOrder = {}, {} -- the keys and days of shared-lease calls: pending spend only
local leases, leaseOrder = {}, {}
local events, credits, billables, out = {}, {}, {}, {}
local a = 3
for i = 1, n do
  local price = tonumber(ARGV[a + 1])
  local member = ARGV[a + 2]
  local resvIdx = tonumber(ARGV[a + 3]) -- 0: a leased call (no reservation of its own)
  local orgIdx = tonumber(ARGV[a + 4])
  local idemIdx = tonumber(ARGV[a + 5]) -- 0: no replay record
  local seenIdx = tonumber(ARGV[a + 9]) -- 0: no seen set
  local event = ARGV[a + 11]
  local leaseIdx = tonumber(ARGV[a + 12]) -- 0: the call's own reservation (member); else its lease's hash
  local nHeld = tonumber(ARGV[a + 13])
  local firstHeld = a + FIELDS
  local o = orgs[orgIdx]
  if not o then
    o = {count = 0, delta = 0}
    orgs[orgIdx] = o
    orgOrder[#orgOrder + 1] = orgIdx
  end
  local open, credit, billable = true, 0, 0
  if price > 0 then
    if leaseIdx > 0 then
      -- The lease still holds the call's price (it is not swept): the price leaves the lease's remainder, summed per
      -- lease and moved once below (the script is atomic, so a lease open for one of its calls is open for all).
      local l = leases[leaseIdx]
      if not l then
        l = {open = redis.call('HEXISTS', KEYS[leaseIdx], 'rem') == 1, spent = 0}
        leases[leaseIdx] = l
        leaseOrder[#leaseOrder + 1] = leaseIdx
      end
      open = l.open
      if open then l.spent = l.spent + price end
    else
      open = redis.call('ZREM', KEYS[resvIdx], member) == 1
    end
    if open then
      if not o.mode then
        local h = redis.call('HMGET', KEYS[orgIdx], 'bal', 'mode', 'pend')
        o.avail = tonumber(h[1] or '0') - tonumber(h[3] or '0')
        o.mode = h[2] or ''
      end
      credit, billable = chargeCall(price, o.avail, o.mode)
      o.avail = o.avail - price
      o.delta = o.delta + price
      for j = 1, nHeld do
        local k = tonumber(ARGV[firstHeld + j])
        if k < 0 then
          k = -k
          if not pendOnly[k] then
            pendOnly[k] = 0
            pendOrder[#pendOrder + 1] = k
          end
          pendOnly[k] = pendOnly[k] + price
        else
          if not held[k] then
            held[k] = 0
            heldOrder[#heldOrder + 1] = k
          end
          held[k] = held[k] + price
        end
      end
    end
  end
  if open then
    o.count = o.count + 1
    events[#events + 1] = event
    credits[#credits + 1] = credit
    billables[#billables + 1] = billable
    if idemIdx > 0 then
      redis.call('SET', KEYS[idemIdx], ARGV[a + 6] .. credit .. ARGV[a + 7] .. billable .. ARGV[a + 8], 'PX', idemTtl)
      if seenIdx > 0 then redis.call('SADD', KEYS[seenIdx], ARGV[a + 10]) end
    end
    out[i] = credit .. ':' .. billable
  else
    out[i] = 'gone'
  end
  a = firstHeld + nHeld
end
for _, k in ipairs(orgOrder) do
  local o = orgs[k]
  if o.delta > 0 then
    add({KEYS[k]}, 'res', -o.delta)
    redis.call('HINCRBY', KEYS[k], 'pend', o.delta)
  end
  if o.count > 0 then redis.call('HINCRBY', KEYS[k], 'pn', o.count) end
end
for _, k in ipairs(leaseOrder) do
  local l = leases[k]
  if l.spent > 0 then redis.call('HINCRBY', KEYS[k], 'rem', -l.spent) end
end
for _, k in ipairs(heldOrder) do
  add({KEYS[k]}, 'res', -held[k])
  redis.call('HINCRBY', KEYS[k], 'pend', held[k])
end
for _, k in ipairs(pendOrder) do redis.call('HINCRBY', KEYS[k], 'pend', pendOnly[k]) end
local id = ''
if #events > 0 then
  id = append(streamKey, consumer, table.concat(events, '\n'), table.concat(credits, ','), table.concat(billables, ','))
end
local reply = {id}
for i = 1, n do reply[i + 1] = out[i] end
return reply
