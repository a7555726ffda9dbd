-- luacheck (Debian: lua-check) for the Redis scripts (core/spend/lua, core/counters/lua, core/money/lua; see
-- core/redis-lua.ts).
-- Redis runs Lua 5.1 and gives each script the globals below. An include's functions reach the scripts that include
-- it as locals: luacheck reads each file alone, so they are named here, and an include file's own definitions are
-- meant for others (unused there). Run: luacheck core
std = 'lua51'
read_globals = { 'redis', 'KEYS', 'ARGV' }
max_line_length = 120
files['core/spend/lua/*.lua'] = {
  read_globals = { 'nowMs', 'KEY_VERSION', 'checkKeyVersion', 'chargeCall', 'GROUP', 'add', 'append' },
}
for _, include in ipairs({ 'now-ms', 'key-version', 'helpers' }) do
  files['core/spend/lua/' .. include .. '.lua'] = { unused = false }
end
-- The money rule's Lua twin (core/money/money-rules.ts), included by core/spend/lua/helpers.lua.
files['core/money/lua/charge-call.lua'] = { unused = false }
