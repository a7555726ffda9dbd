import type { Principal } from '../core/auth/scopes.js';
import type { Logger } from '../core/logger.js';
import type { InProcessGateway } from '../gateway/in-process.js';

/** What a tool knows about the session that calls it; refreshed on every request (the key's current scopes). */
export interface ToolContext {
  principal: Principal;
  ip: string;
  log: Logger;
}

/** What tools share across the sessions of one agent-tool process. */
export interface ToolRuntime {
  /** The gateway's one enforcement path, driven in process (gateway/in-process.ts) by call_api and run_probe. */
  gateway: InProcessGateway;
}
