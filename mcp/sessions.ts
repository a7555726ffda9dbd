/**
 * The agent-tool server's open MCP sessions, in this process's memory, bounded two ways:
 *
 * - per org: at most `perOrg` sessions. Opening one more closes the org's least recently used session that has no
 *   call in flight (an agent that crashed never says goodbye, and refusing new sessions would lock the org out until
 *   its orphans expire); when every session is busy with a call, the new one is refused with 429.
 * - by idleness: a session with no request for `idleMs` is closed, by a sweep on an unref'd timer and again when a
 *   request names it. An open GET stream (server notifications) is not activity; a POST in flight is.
 *
 * A closed session's id answers 404, which tells an MCP client to initialize a new one (MCP transport rules).
 * Sessions persisted for 30 days (the spec's lifetime) come later; this is the in-memory tier.
 */
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { RateLimitedError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { ToolContext } from './tool-context.js';

export interface McpSession {
  id: string;
  transport: StreamableHTTPServerTransport;
  orgId: string;
  /** The key that opened the session: only that key may use it. */
  keyId: string;
  /** SHA-256 of that key, to recognise it once it no longer authenticates (revoked). */
  keyHash: string;
  /** What the session's tools see; refreshed from each request's authentication. */
  context: ToolContext;
  lastSeen: number;
  /** POST and DELETE requests in flight (a session with one is never evicted or expired). */
  busy: number;
}

export type CloseReason = 'evicted' | 'expired' | 'key_revoked' | 'terminated' | 'not_initialized' | 'shutdown';

export interface McpSessionsOptions {
  perOrg: number;
  idleMs: number;
  logger: Logger;
}

/** Retry-After for a refused session: about as long as a typical tool call, so a retry usually finds room. */
const BUSY_RETRY_SECONDS = 5;

export class McpSessions {
  private readonly byId = new Map<string, McpSession>();
  private readonly byOrg = new Map<string, Set<string>>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: McpSessionsOptions) {}

  get size(): number {
    return this.byId.size;
  }

  /** Start the idle sweep (every quarter of the idle limit, at most once a minute). */
  start(): void {
    const every = Math.min(60_000, Math.max(50, Math.floor(this.options.idleMs / 4)));
    this.timer = setInterval(() => this.sweep(), every);
    this.timer.unref();
  }

  /** A live session by id; one idle past the limit is closed here rather than served. */
  get(id: string): McpSession | undefined {
    const session = this.byId.get(id);
    if (session && this.isExpired(session)) {
      this.close(session, 'expired');
      return undefined;
    }
    return session;
  }

  /**
   * Register a new session for its org, making room first. Synchronous from the cap check to the insert, so
   * concurrent initializes of one org cannot overshoot the cap.
   */
  add(session: McpSession): void {
    const ids = this.byOrg.get(session.orgId) ?? new Set<string>();
    if (ids.size >= this.options.perOrg) {
      let victim: McpSession | undefined;
      for (const id of ids) {
        const s = this.byId.get(id)!;
        if (s.busy === 0 && (!victim || s.lastSeen < victim.lastSeen)) victim = s;
      }
      if (!victim) {
        throw new RateLimitedError(
          BUSY_RETRY_SECONDS,
          `This organization has ${this.options.perOrg} open MCP sessions, each with a call in progress; ` +
            'retry when one finishes, or end a session you no longer need (DELETE /mcp).',
        );
      }
      this.close(victim, 'evicted');
    }
    ids.add(session.id);
    this.byOrg.set(session.orgId, ids);
    this.byId.set(session.id, session);
  }

  /** Run one request of a session: it counts as activity, and (unless a GET stream) keeps the session busy. */
  async use<T>(session: McpSession, method: string, fn: () => Promise<T>): Promise<T> {
    const counts = method !== 'GET';
    session.lastSeen = Date.now();
    if (counts) session.busy++;
    try {
      return await fn();
    } finally {
      if (counts) session.busy--;
      session.lastSeen = Date.now();
    }
  }

  /**
   * Forget a session and close its transport (ends its open streams), except when the client ended it (DELETE): the
   * transport answers that request and then closes itself. Idempotent.
   */
  close(session: McpSession, reason: CloseReason): void {
    if (this.byId.get(session.id) !== session) return;
    this.byId.delete(session.id);
    const ids = this.byOrg.get(session.orgId);
    ids?.delete(session.id);
    if (ids?.size === 0) this.byOrg.delete(session.orgId);
    if (reason !== 'shutdown') {
      this.options.logger.info({ session: session.id, org: session.orgId, reason }, 'mcp session closed');
    }
    if (reason === 'terminated') return;
    void session.transport.close().catch((err: unknown) => {
      this.options.logger.warn({ err, session: session.id }, 'closing an mcp transport failed');
    });
  }

  /** Close every session idle past the limit. */
  sweep(): void {
    for (const session of [...this.byId.values()]) if (this.isExpired(session)) this.close(session, 'expired');
  }

  /** Stop the sweep and close every session (shutdown). */
  async closeAll(): Promise<void> {
    clearInterval(this.timer);
    const all = [...this.byId.values()];
    for (const session of all) this.close(session, 'shutdown');
    await Promise.allSettled(all.map((s) => s.transport.close()));
  }

  private isExpired(session: McpSession): boolean {
    return session.busy === 0 && Date.now() - session.lastSeen >= this.options.idleMs;
  }
}
