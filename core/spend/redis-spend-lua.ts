/**
 * The Lua scripts of RedisSpendStore (core/spend/redis-spend-store.ts: the key layout and what each operation means),
 * one file each in core/spend/lua/, read once when this module loads (core/redis-lua.ts: the `-- include:` directive).
 * Each file's header names its KEYS and ARGV and its reply. Every deadline two processes compare (a reservation's
 * expiry, a balance's age) is read from Redis's own clock (lua/now-ms.lua), so gateways whose clocks disagree still
 * agree on when a reservation expires.
 */
import { luaScript } from '../redis-lua.js';

const lua = (file: string) => luaScript(import.meta.url, `lua/${file}`);

export const ADMIT = lua('admit.lua');
export const SETTLE = lua('settle.lua');
export const VOID = lua('void.lua');
export const ACK = lua('ack.lua');
export const CLAIM = lua('claim.lua');
export const HYDRATE = lua('hydrate.lua');
export const KEYS_CHANGED = lua('keys-changed.lua');
export const FORGET = lua('forget.lua');
export const EXPIRED = lua('expired.lua');
export const SEEN_EPOCH = lua('seen-epoch.lua');
export const SEEN_COMPLETE = lua('seen-complete.lua');
export const LEASE = lua('lease.lua');
export const LEASE_RETURN = lua('lease-return.lua');

/** RedisSpendStore's commands by name, each defined on its client once (its constructor). */
export const SPEND_SCRIPTS = {
  spAdmit: ADMIT,
  spSettle: SETTLE,
  spVoid: VOID,
  spHydrate: HYDRATE,
  spForget: FORGET,
  spAck: ACK,
  spClaim: CLAIM,
  spExpired: EXPIRED,
  spKeysChanged: KEYS_CHANGED,
  spSeenEpoch: SEEN_EPOCH,
  spSeenComplete: SEEN_COMPLETE,
  spLease: LEASE,
  spLeaseReturn: LEASE_RETURN,
};
