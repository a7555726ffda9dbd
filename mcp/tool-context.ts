import type { Principal } from '../core/auth/scopes.js';
import type { Logger } from '../core/logger.js';

/** What a tool knows about the session that calls it; refreshed on every request (the key's current scopes). */
export interface ToolContext {
  principal: Principal;
  ip: string;
  log: Logger;
}
