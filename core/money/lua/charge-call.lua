-- Include (core/redis-lua.ts): the money rule `chargeCall` (core/money/money-rules.ts) in Lua, for the settle script.
-- chargeCall(price, balance, mode) returns the credit applied and the billable part of a paid call of `price` cents
-- for an org whose available balance is `balance` and billing mode `mode` ('card' or prepaid). A prepaid balance never
-- goes negative: the call is charged what is left. A card-billed org is charged the full price; what credit covers is
-- applied, the rest is billable. test/integration/money-rules-sql.test.ts checks it against the TypeScript rule on a
-- real Redis.
local function chargeCall(price, balance, mode)
  local credit = math.max(0, balance)
  local charged = price
  if mode ~= 'card' then charged = math.min(price, credit) end
  local applied = math.min(charged, credit)
  return applied, price - applied
end
