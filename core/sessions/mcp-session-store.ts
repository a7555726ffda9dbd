/**
 * The stored truth of agent-tool (MCP) sessions, table `mcp_sessions` (db/entities/mcp-session.entity.ts). Every MCP
 * instance reads it on every request, so a session opened on one instance is served by any other and after a
 * restart, and a session ended anywhere (DELETE /mcp, evicted by the org's cap, its key revoked) is gone everywhere.
 *
 * - Ids are stored as their SHA-256 only.
 * - A session belongs to one key: presented with any other key it is indistinguishable from an unknown one.
 * - Expiry: no request for `idleMs` (30 days by default, the spec's lifetime). `last_seen_at` is rewritten at most
 *   once per `touchMs`, so a busy session does not write on every request; expiry is that much less precise.
 * - Cap: at most `perOrg` live sessions per org. Opening one more ends the org's least recently used session that
 *   has no call in flight on this instance (see `open`); when all of them have, the new one is refused (429).
 * - Time comes from the injected clock, never the database's `now()`, so tests can move it.
 */
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { McpSessionEndReason } from '../../db/entities/index.js';
import { pgArray, toDate } from '../db/sql.js';
import type { Clock } from '../clock.js';
import { sha256Hex } from '../crypto.js';
import { RateLimitedError } from '../errors.js';

export interface McpSessionStoreOptions {
  perOrg: number;
  idleMs: number;
  touchMs: number;
  clock: Clock;
}

/** What rebuilding a session's MCP server needs, plus whom it belongs to. */
export interface StoredMcpSession {
  id: string;
  orgId: string;
  keyId: string;
  protocolVersion: string;
  clientInfo: Record<string, unknown>;
  clientCapabilities: Record<string, unknown>;
  /** The `last_seen_at` now stored (after any touch this lookup made). */
  lastSeenAt: Date;
}

export type NewMcpSession = Omit<StoredMcpSession, 'lastSeenAt'>;

/** What this process knows of the sessions it holds live, for choosing whom the org's cap ends. */
export interface LocalSessionView {
  /** A request of the session is in flight here. */
  busy(idHash: string): boolean;
  /** When this process last served the session (more recent than the stored, throttled `last_seen_at`). */
  lastUsedAt(idHash: string): number | undefined;
  /** This process's order of use (higher: more recent), which breaks ties of `lastUsedAt` within one millisecond. */
  recency?(idHash: string): number | undefined;
}

/** Retry-After for a refused session: about as long as a typical tool call, so a retry usually finds room. */
const BUSY_RETRY_SECONDS = 5;
/** Ended rows are kept this long (why a session ended, for support), then purged. */
const ENDED_RETENTION_MS = 86_400_000;
/** First key of the per-org advisory lock that serialises opening sessions (the second is the org id's hash). */
const OPEN_LOCK_CLASS = 0x6d6370;

export const hashSessionId = (id: string): string => sha256Hex(id);

interface SessionRow {
  org_id: string;
  key_id: string;
  protocol_version: string;
  client_info: Record<string, unknown>;
  client_capabilities: Record<string, unknown>;
  /** Raw queries give timestamps as strings. */
  last_seen_at: Date | string;
  ended_at: Date | string | null;
}

export class McpSessionStore {
  /** The write throttle, never more than a tenth of the idle limit (so throttling cannot expire a busy session). */
  private readonly touchMs: number;

  constructor(
    private readonly orm: MikroORM,
    private readonly options: McpSessionStoreOptions,
  ) {
    this.touchMs = Math.min(options.touchMs, Math.floor(options.idleMs / 10));
  }

  private get now(): Date {
    return this.options.clock.now();
  }

  /** Sessions last seen at or before this have expired. */
  private cutoff(now: Date): Date {
    return new Date(now.getTime() - this.options.idleMs);
  }

  /**
   * Store a new session, making room first. The org's opens are serialised by an advisory lock (not a row lock on
   * `orgs`, which money transactions hold), so concurrent initializes on any number of instances cannot overshoot.
   * Returns the id hashes of the sessions it ended to make room.
   */
  async open(session: NewMcpSession, local: LocalSessionView): Promise<{ evicted: string[] }> {
    const now = this.now;
    return this.orm.em.fork().transactional(async (em) => {
      await em.execute('select pg_advisory_xact_lock(?, hashtext(?))', [OPEN_LOCK_CLASS, session.orgId]);
      const live = await em.execute<{ id_hash: string; last_seen_at: Date | string }[]>(
        `select id_hash, last_seen_at from mcp_sessions
          where org_id = ? and ended_at is null and last_seen_at > ? order by created_at`,
        [session.orgId, this.cutoff(now)],
      );
      const evicted = leastRecentlyUsed(live, local, live.length - this.options.perOrg + 1);
      if (evicted === undefined) {
        throw new RateLimitedError(
          BUSY_RETRY_SECONDS,
          `This organization has ${this.options.perOrg} open MCP sessions, each with a call in progress; ` +
            'retry when one finishes, or end a session you no longer need (DELETE /mcp).',
        );
      }
      await endRows(em, evicted, 'evicted', now);
      await em.execute(
        `insert into mcp_sessions
           (id_hash, org_id, key_id, protocol_version, client_info, client_capabilities, created_at, last_seen_at)
         values (?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          hashSessionId(session.id),
          session.orgId,
          session.keyId,
          session.protocolVersion,
          JSON.stringify(session.clientInfo),
          JSON.stringify(session.clientCapabilities),
          now,
          now,
        ],
      );
      return { evicted };
    });
  }

  /**
   * The live session `id` of key `keyId`, counting this lookup as activity unless `activity` is false (a GET stream
   * is not); undefined when it is unknown, ended, expired or another key's (the caller answers all four alike).
   */
  async resume(id: string, keyId: string, activity = true): Promise<StoredMcpSession | undefined> {
    const idHash = hashSessionId(id);
    const em = this.orm.em.fork();
    const [row] = await em.execute<SessionRow[]>(
      `select org_id, key_id, protocol_version, client_info, client_capabilities, last_seen_at, ended_at
         from mcp_sessions where id_hash = ?`,
      [idHash],
    );
    const now = this.now;
    if (!row || row.ended_at || row.key_id !== keyId) return undefined;
    const seen = toDate(row.last_seen_at);
    if (seen.getTime() <= this.cutoff(now).getTime()) return undefined; // expired; purge() deletes it
    const lastSeenAt = activity ? await this.touch(idHash, seen, em) : seen;
    return {
      id,
      orgId: row.org_id,
      keyId: row.key_id,
      protocolVersion: row.protocol_version,
      clientInfo: row.client_info,
      clientCapabilities: row.client_capabilities,
      lastSeenAt,
    };
  }

  /** Record activity when the stored time is at least `touchMs` old; returns the time now stored. */
  async touch(idHash: string, storedSeenAt: Date, em: EntityManager = this.orm.em.fork()): Promise<Date> {
    const now = this.now;
    if (now.getTime() - storedSeenAt.getTime() < this.touchMs) return storedSeenAt;
    await em.execute(
      'update mcp_sessions set last_seen_at = ? where id_hash = ? and ended_at is null and last_seen_at < ?',
      [now, idHash, now],
    );
    return now;
  }

  /** End a session (idempotent); true when this call ended it. */
  async end(id: string, reason: McpSessionEndReason): Promise<boolean> {
    const ended = await endRows(this.orm.em.fork(), [hashSessionId(id)], reason, this.now);
    return ended > 0;
  }

  /** Forget a session that never started (the transport refused its initialize). */
  async discard(id: string): Promise<void> {
    await this.orm.em.fork().execute('delete from mcp_sessions where id_hash = ?', [hashSessionId(id)]);
  }

  /** End the session when the key it belongs to is revoked; true when it did. */
  async endIfKeyRevoked(id: string): Promise<boolean> {
    const rows = await this.orm.em.fork().execute<{ id_hash: string }[]>(
      `update mcp_sessions s set ended_at = ?, end_reason = 'key_revoked'
         from api_keys k
        where s.id_hash = ? and s.ended_at is null and k.id = s.key_id and k.revoked_at is not null
        returning s.id_hash`,
      [this.now, hashSessionId(id)],
    );
    return rows.length > 0;
  }

  /** Of these id hashes, the ones still live (not ended, not expired). */
  async liveAmong(idHashes: readonly string[]): Promise<Set<string>> {
    if (idHashes.length === 0) return new Set();
    const rows = await this.orm.em
      .fork()
      .execute<{ id_hash: string }[]>(
        `select id_hash from mcp_sessions where id_hash = any(?::varchar[]) and ended_at is null and last_seen_at > ?`,
        [pgArray(idHashes), this.cutoff(this.now)],
      );
    return new Set(rows.map((r) => r.id_hash));
  }

  /** Delete expired sessions, and ended ones kept past their retention. Returns how many rows went. */
  async purge(): Promise<number> {
    const now = this.now;
    const rows = await this.orm.em
      .fork()
      .execute<{ id_hash: string }[]>(
        'delete from mcp_sessions where last_seen_at <= ? or ended_at <= ? returning id_hash',
        [this.cutoff(now), new Date(now.getTime() - ENDED_RETENTION_MS)],
      );
    return rows.length;
  }
}

/**
 * End every live session of these keys, inside the caller's transaction (revoking a key: its sessions end at once,
 * whichever instance holds them).
 */
export async function endMcpSessionsOfKeys(em: EntityManager, keyIds: readonly string[], now: Date): Promise<void> {
  if (keyIds.length === 0) return;
  await em.execute(
    `update mcp_sessions set ended_at = ?, end_reason = 'key_revoked'
      where key_id = any(?::varchar[]) and ended_at is null`,
    [now, pgArray(keyIds)],
  );
}

async function endRows(
  em: EntityManager,
  idHashes: readonly string[],
  reason: McpSessionEndReason,
  now: Date,
): Promise<number> {
  if (idHashes.length === 0) return 0;
  const rows = await em.execute<{ id_hash: string }[]>(
    `update mcp_sessions set ended_at = ?, end_reason = ?
      where id_hash = any(?::varchar[]) and ended_at is null returning id_hash`,
    [now, reason, pgArray(idHashes)],
  );
  return rows.length;
}

/**
 * The `count` least recently used sessions with no call in flight here (this process's own last use counts where it
 * is newer than the throttled stored time), or undefined when there are not that many. Sessions in `live` are in
 * creation order, which breaks ties.
 */
function leastRecentlyUsed(
  live: { id_hash: string; last_seen_at: Date | string }[],
  local: LocalSessionView,
  count: number,
): string[] | undefined {
  if (count <= 0) return [];
  const idle = live
    .filter((s) => !local.busy(s.id_hash))
    .map((s) => ({
      id: s.id_hash,
      at: Math.max(toDate(s.last_seen_at).getTime(), local.lastUsedAt(s.id_hash) ?? 0),
      rank: local.recency?.(s.id_hash) ?? -1,
    }))
    // Equal milliseconds: this process's order of use, then (stable) creation order.
    .sort((a, b) => a.at - b.at || a.rank - b.rank);
  return idle.length >= count ? idle.slice(0, count).map((s) => s.id) : undefined;
}
