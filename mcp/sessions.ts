/**
 * The agent-tool server's MCP sessions. Postgres holds the truth (core/mcp-sessions/mcp-session-store.ts: who owns a
 * session, whether it is live, when it was last seen, the org's cap); this process holds live objects for the
 * sessions it serves, an McpServer and its transport each, in a bounded cache:
 *
 * - A request naming a session checks the stored record first, every time; a session this process does not hold
 *   (opened on another instance, or before a restart, or dropped from the cache) is rebuilt from the record without
 *   a new `initialize` (mcp/session-transport.ts). So a session ended anywhere is refused here at once.
 * - The cache keeps at most `cacheMax` sessions and drops one unused for `cacheIdleMs` (never one with a request in
 *   flight; an open GET stream keeps it too, unless the cache is full). Dropping only frees memory: the session stays
 *   stored, and its client notices nothing except that an open GET stream (server notifications:
 *   tools/list_changed) ends, which the SDK client reopens.
 * - A GET stream is not activity: a client that only holds one still expires after the idle limit.
 * - A sweep on an unref'd timer drops idle entries, drops entries whose stored session ended or expired (ended on
 *   another instance, say), and purges old rows.
 */
import { randomUUID } from 'node:crypto';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import {
  hashSessionId,
  type LocalSessionView,
  type McpSessionStore,
  type StoredMcpSession,
} from '../core/sessions/mcp-session-store.js';
import {
  createSessionTransport,
  restoreSession,
  SessionRestoreError,
  type SessionHandshake,
  type SessionTransport,
} from './session-transport.js';
import type { ToolContext } from './tool-context.js';

export interface LiveSession {
  readonly id: string;
  readonly idHash: string;
  readonly keyId: string;
  readonly transport: SessionTransport;
  /** What the session's tools see; refreshed from each request's authentication. */
  readonly context: ToolContext;
  /** When this process last served it (clock ms). */
  lastUsed: number;
  /** The stored `last_seen_at` as this process last wrote or read it. */
  storedSeenAt: Date;
  /** Requests in flight other than GET streams (a busy session is never dropped or evicted here). */
  busy: number;
  /** Open GET streams (server notifications): they keep the session in memory while the cache has room. */
  streams: number;
}

export type KeyPrincipal = Extract<ToolContext['principal'], { type: 'api_key' }>;

export interface McpSessionsOptions {
  store: McpSessionStore;
  clock: Clock;
  logger: Logger;
  cacheMax: number;
  cacheIdleMs: number;
  sweepMs: number;
  /** Our MCP endpoint URL (requests replayed to rebuild a session are addressed to it). */
  endpoint: string;
  buildServer: (context: ToolContext) => McpServer;
}

type DropReason = 'evicted' | 'ended' | 'idle' | 'cache_full' | 'shutdown';

export class McpSessions {
  /** By session id, least recently used first (an entry is re-inserted when used). */
  private readonly live = new Map<string, LiveSession>();
  /** Hashes of sessions being opened here: their row may exist before they are live (counted busy). */
  private readonly opening = new Set<string>();
  private readonly building = new Map<string, Promise<LiveSession | undefined>>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: McpSessionsOptions) {}

  /** Sessions held live in this process. */
  get size(): number {
    return this.live.size;
  }

  start(): void {
    this.timer = setInterval(() => {
      this.sweep().catch((err: unknown) => this.options.logger.warn({ err }, 'mcp session sweep failed'));
    }, this.options.sweepMs);
    this.timer.unref();
  }

  /**
   * Open a session for the key and run its `initialize` request (`handle`) on it. Storing it may end the org's
   * least recently used session (or refuse with 429, core/mcp-sessions). When the transport refuses the initialize,
   * the session is forgotten again.
   */
  async open(
    principal: KeyPrincipal,
    handshake: Omit<SessionHandshake, 'id'>,
    context: ToolContext,
    handle: (session: LiveSession) => Promise<void>,
  ): Promise<void> {
    const id = randomUUID();
    const stored = { id, orgId: principal.orgId, keyId: principal.keyId, ...handshake };
    // Counted busy from before its row exists until its initialize is answered, so a concurrent open of the same org
    // (waiting on the store's lock) cannot evict it while it is not yet live here.
    const idHash = hashSessionId(id);
    this.opening.add(idHash);
    let session: LiveSession;
    try {
      const { evicted } = await this.options.store.open(stored, this.localView());
      for (const evictedHash of evicted) this.dropByHash(evictedHash, 'evicted');
      const created = this.create({ ...stored, lastSeenAt: this.options.clock.now() }, context);
      session = created.session;
      await this.run(session, 'POST', async () => {
        await created.server.connect(session.transport);
        await handle(session);
      });
    } finally {
      this.opening.delete(idHash);
    }
    if (session.transport.sessionId === undefined) {
      this.drop(session, 'ended');
      await this.options.store.discard(id);
    }
  }

  /**
   * The live session `id` of this key, rebuilt from its stored record when this process does not hold it; a request
   * other than a GET stream counts as activity. Undefined when the id is unknown, ended, expired or another key's.
   */
  async resume(
    id: string,
    method: string,
    principal: KeyPrincipal,
    context: ToolContext,
  ): Promise<LiveSession | undefined> {
    const stored = await this.options.store.resume(id, principal.keyId, method !== 'GET');
    const held = this.live.get(id);
    if (!stored) {
      // Only the owner's request may drop the owner's live session; another key's 404 changes nothing.
      if (held?.keyId === principal.keyId && held.busy === 0) this.drop(held, 'ended');
      return undefined;
    }
    if (held) {
      held.storedSeenAt = stored.lastSeenAt;
      return held;
    }
    let pending = this.building.get(id);
    if (!pending) {
      pending = this.rebuild(stored, context).finally(() => this.building.delete(id));
      this.building.set(id, pending);
    }
    return pending;
  }

  /**
   * Run one request of a session: it counts as use (for the cache and the org's least-recently-used choice), and
   * keeps the session busy, except a GET stream, which only keeps it in memory.
   */
  async run<T>(session: LiveSession, method: string, fn: () => Promise<T>): Promise<T> {
    const counts = method !== 'GET';
    this.markUsed(session);
    if (counts) session.busy++;
    else session.streams++;
    try {
      return await fn();
    } finally {
      if (counts) session.busy--;
      else session.streams--;
      this.markUsed(session);
      // Over the cap because this session was busy when another was added: trim now that it is not.
      if (this.live.size > this.options.cacheMax) this.trimCache(session);
      // A long call counts as activity at its end too (the store writes only when its time is due).
      if (counts) await this.touch(session);
    }
  }

  /**
   * After a request naming session `id` failed authentication: when the session's key is revoked, the session ends
   * (revoking through the keys service ended it already; this covers any other way a key stops) and this process
   * lets go of it. A bad token from anyone else changes nothing.
   */
  async afterUnauthenticated(id: string): Promise<void> {
    await this.options.store.endIfKeyRevoked(id);
    const held = this.live.get(id);
    if (held && held.busy === 0 && !(await this.options.store.liveAmong([held.idHash])).has(held.idHash)) {
      this.drop(held, 'ended');
    }
  }

  /** Drop idle and ended sessions from memory; purge old rows. */
  async sweep(): Promise<void> {
    const now = this.options.clock.now().getTime();
    for (const s of [...this.live.values()]) {
      if (s.busy === 0 && s.streams === 0 && now - s.lastUsed >= this.options.cacheIdleMs) this.drop(s, 'idle');
    }
    const held = [...this.live.values()];
    const stillLive = await this.options.store.liveAmong(held.map((s) => s.idHash));
    for (const s of held) if (s.busy === 0 && !stillLive.has(s.idHash)) this.drop(s, 'ended');
    const purged = await this.options.store.purge();
    if (purged > 0) this.options.logger.debug({ purged }, 'mcp sessions purged');
  }

  /** Stop the sweep and close every live session (shutdown). The stored sessions stay: another process serves them. */
  async closeAll(): Promise<void> {
    clearInterval(this.timer);
    const all = [...this.live.values()];
    for (const session of all) this.drop(session, 'shutdown');
    await Promise.allSettled(all.map((s) => s.transport.close()));
  }

  /** A live session for a stored one, initialized by replaying its handshake; undefined when the SDK refuses. */
  private async rebuild(stored: StoredMcpSession, context: ToolContext): Promise<LiveSession | undefined> {
    const { session, server } = this.create(stored, context);
    session.busy++; // not droppable while it is being rebuilt
    try {
      await server.connect(session.transport);
      await restoreSession(session.transport, stored, this.options.endpoint);
      return session;
    } catch (err) {
      this.drop(session, 'ended');
      if (!(err instanceof SessionRestoreError)) throw err;
      this.options.logger.warn({ err, session: stored.id }, 'an mcp session could not be rebuilt; it is ended');
      await this.options.store.end(stored.id, 'not_restorable');
      return undefined;
    } finally {
      session.busy--;
    }
  }

  /** A live session with its server, remembered at once (synchronously). */
  private create(
    stored: Pick<StoredMcpSession, 'id' | 'keyId' | 'lastSeenAt'>,
    context: ToolContext,
  ): { session: LiveSession; server: McpServer } {
    const { id } = stored;
    const transport = createSessionTransport(id, async () => {
      // The client ended it (DELETE): end it everywhere; the transport answers and then closes itself.
      await this.options.store.end(id, 'terminated');
      if (this.live.get(id)?.transport === transport) this.live.delete(id);
    });
    const session: LiveSession = {
      id,
      idHash: hashSessionId(id),
      keyId: stored.keyId,
      transport,
      context,
      lastUsed: this.options.clock.now().getTime(),
      storedSeenAt: stored.lastSeenAt,
      busy: 0,
      streams: 0,
    };
    this.live.set(id, session);
    this.trimCache(session);
    return { session, server: this.options.buildServer(context) };
  }

  private markUsed(session: LiveSession): void {
    session.lastUsed = this.options.clock.now().getTime();
    if (this.live.get(session.id) === session) {
      this.live.delete(session.id); // re-insert: most recently used last
      this.live.set(session.id, session);
    }
  }

  private async touch(session: LiveSession): Promise<void> {
    try {
      session.storedSeenAt = await this.options.store.touch(session.idHash, session.storedSeenAt);
    } catch (err) {
      this.options.logger.warn({ err, session: session.id }, 'recording mcp session activity failed');
    }
  }

  /** Over the cap, drop the least recently used sessions that have nothing in flight (never `keep`, the newest). */
  private trimCache(keep: LiveSession): void {
    for (const s of this.live.values()) {
      if (this.live.size <= this.options.cacheMax) return;
      if (s.busy === 0 && s !== keep) this.drop(s, 'cache_full');
    }
  }

  /** What this process knows of its sessions, read when the store asks (under its lock), not when it is built. */
  private localView(): LocalSessionView {
    const byHash = () => new Map([...this.live.values()].map((s) => [s.idHash, s]));
    return {
      busy: (idHash) => this.opening.has(idHash) || (byHash().get(idHash)?.busy ?? 0) > 0,
      lastUsedAt: (idHash) => byHash().get(idHash)?.lastUsed,
      // `live` is kept in order of use (markUsed re-inserts), most recent last.
      recency: (idHash) => {
        let rank = 0;
        for (const s of this.live.values()) {
          if (s.idHash === idHash) return rank;
          rank++;
        }
        return undefined;
      },
    };
  }

  private dropByHash(idHash: string, reason: DropReason): void {
    for (const s of this.live.values()) if (s.idHash === idHash) return this.drop(s, reason);
  }

  /** Let go of a live session and close its transport (ends its open streams). Idempotent. */
  private drop(session: LiveSession, reason: DropReason): void {
    if (this.live.get(session.id) === session) this.live.delete(session.id);
    if (reason === 'evicted' || reason === 'ended') {
      this.options.logger.info({ session: session.id, reason }, 'mcp session closed');
    } else if (reason !== 'shutdown') {
      this.options.logger.debug({ session: session.id, reason }, 'mcp session dropped from memory');
    }
    void session.transport.close().catch((err: unknown) => {
      this.options.logger.warn({ err, session: session.id }, 'closing an mcp transport failed');
    });
  }
}
