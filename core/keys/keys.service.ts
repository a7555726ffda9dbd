/**
 * API keys: creation, and authentication by SHA-256 lookup behind an in-process cache. Every process subscribes to
 * the invalidation channel, so a revoked or changed key is dropped from every cache as soon as the message lands,
 * and at worst after `cacheTtlMs` (1 s) should a message be lost: every surface (REST, the agent tools, the gateway's
 * replay and rate-limit memos behind authentication) sees a revocation or a tightened cap within 1 s without pub/sub
 * (issue 21 item 12). The gateway's admission is sooner still: it compares the org's key version in the shared state. A cached key carries its ancestors' budgets
 * and daily caps, so a change to a key invalidates its descendants too (KeyAdminService does that).
 */
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { ApiKey, Org, type IApiKey, type KeySource } from '../../db/entities/index.js';
import type { Principal, Scope } from '../auth/scopes.js';
import type { CounterStore, Unsubscribe } from '../counters/index.js';
import { UnauthenticatedError } from '../errors.js';
import { newId } from '../ids.js';
import type { Logger } from '../logger.js';
import { MAX_KEY_DEPTH } from './key-governance.js';
import { generateKeyMaterial, hashKey } from './key-material.js';

export const KEY_INVALIDATION_CHANNEL = 'keys:invalidate';
/** A cached key's life: one Postgres read per key per second per process at most, and a lost message costs 1 s. */
export const KEY_CACHE_TTL_MS = 1_000;

/** What the hot paths need about a key, cached by hash. */
/** The gateway's shared key version (SpendStore.keysChanged in core/spend), passed in: keys sits below spend. */
export interface KeyVersionBump {
  keysChanged(orgId: string): Promise<void>;
}

export interface KeyAuth {
  keyId: string;
  orgId: string;
  keyPrefix: string;
  scopes: readonly Scope[];
  budgetCents: number | null;
  perCallMaxCents: number | null;
  dailyCapCents: number | null;
  approvalMode: boolean;
  approvedCents: number;
  /**
   * The keys above this one (the key that minted it, that key's parent, …), nearest parent first; empty for a root
   * key. A child's spend counts against each ancestor's budget and daily cap too.
   */
  ancestors: readonly KeyAncestor[];
  /**
   * The org's key version in the gateway's shared state when this copy was read (SpendStore.keysChanged; undefined:
   * not known yet). The admission compares it, so a copy older than a revocation or a cap change is re-read.
   */
  version?: string;
}

export interface KeyAncestor {
  keyId: string;
  budgetCents: number | null;
  dailyCapCents: number | null;
}

export interface CreateKeyInput {
  orgId: string;
  name: string;
  scopes: readonly Scope[];
  source: KeySource;
  /** The key that mints this one (null or absent: a root key). */
  parentKeyId?: string | null;
  budgetCents?: number | null;
  perCallMaxCents?: number | null;
  dailyCapCents?: number | null;
}

/** A key's principal and hot-path facts: one frozen object per cache entry, shared by every call it serves. */
export type KeyCaller = Readonly<{ principal: Principal; key: KeyAuth }>;

interface CacheEntry {
  value: KeyAuth | null; // null = known-unknown (negative cache)
  /** What authenticate answers for `value`, built once per entry rather than per call. */
  caller: KeyCaller | null;
  expiresAt: number;
  /** When it was read from Postgres. */
  loadedAt: number;
}

/**
 * How long the gateway trusts a cached key that carries the org's key version (`versionedTrustMs`): every admission
 * and every lease compares that version with the shared state's, so a changed key is re-read by the next one (within
 * a lease's 1 s window) whatever the cache says. Other surfaces, which make no such check, trust a copy 1 s.
 */
export const VERSIONED_KEY_TRUST_MS = 60_000;

export interface KeysServiceOptions {
  /** Where a key change is also recorded for the gateways' admissions (the key version), besides pub/sub. */
  spend?: KeyVersionBump;
  /** How long a cached key is trusted without pub/sub: the bound on seeing a change when a message is lost. */
  cacheTtlMs?: number;
  negativeTtlMs?: number;
  maxEntries?: number;
}

function unknownKey(): UnauthenticatedError {
  return new UnauthenticatedError('Unknown or revoked API key.');
}

function keyCaller(key: KeyAuth | null): KeyCaller | null {
  if (!key) return null;
  const principal: Principal = Object.freeze({
    type: 'api_key',
    orgId: key.orgId,
    keyId: key.keyId,
    keyPrefix: key.keyPrefix,
    scopes: key.scopes,
  });
  return Object.freeze({ key, principal });
}

function callerOrThrow(caller: KeyCaller | null): KeyCaller {
  if (!caller) throw unknownKey();
  return caller;
}

export class KeysService {
  private readonly cache = new Map<string, CacheEntry>();
  private unsubscribe: Unsubscribe | undefined;
  private readonly cacheTtlMs: number;
  private readonly negativeTtlMs: number;
  private readonly maxEntries: number;
  private readonly spend: KeyVersionBump | undefined;

  constructor(
    private readonly orm: MikroORM,
    private readonly counters: CounterStore,
    private readonly logger: Logger,
    options: KeysServiceOptions = {},
  ) {
    this.cacheTtlMs = options.cacheTtlMs ?? KEY_CACHE_TTL_MS;
    this.negativeTtlMs = options.negativeTtlMs ?? 2_000;
    this.maxEntries = options.maxEntries ?? 50_000;
    this.spend = options.spend;
  }

  /** Subscribe to invalidations. Called once by the composition root. */
  async start(): Promise<void> {
    this.unsubscribe = await this.counters.subscribe(KEY_INVALIDATION_CHANNEL, (hash) => {
      this.cache.delete(hash);
    });
  }

  async stop(): Promise<void> {
    await this.unsubscribe?.();
    this.cache.clear();
  }

  /**
   * Create a key inside the caller's unit of work. Returns the entity and the plaintext, which is never stored and
   * must be shown to the caller exactly once.
   */
  create(em: EntityManager, input: CreateKeyInput): { key: IApiKey; plaintext: string } {
    const material = generateKeyMaterial();
    const key = em.create(ApiKey, {
      id: newId('apiKey'),
      org: em.getReference(Org, input.orgId),
      parentKey: input.parentKeyId ? em.getReference(ApiKey, input.parentKeyId) : null,
      name: input.name,
      keyHash: material.hash,
      keyPrefix: material.prefix,
      scopes: [...input.scopes],
      source: input.source,
      budgetCents: input.budgetCents ?? null,
      perCallMaxCents: input.perCallMaxCents ?? null,
      dailyCapCents: input.dailyCapCents ?? null,
    });
    return { key, plaintext: material.plaintext };
  }

  /**
   * Resolve a plaintext API key to its principal, or reject with 401. Served from cache when warm: then the answer is
   * the entry's prebuilt (frozen) caller, with no async frame or allocation beyond the resolved promise.
   */
  authenticate(plaintext: string, options: { versionedTrustMs?: number } = {}): Promise<KeyCaller> {
    const hash = hashKey(plaintext);
    const hit = this.cache.get(hash);
    if (hit !== undefined) {
      const now = Date.now();
      const trusted =
        hit.expiresAt > now ||
        (options.versionedTrustMs !== undefined &&
          hit.value?.version !== undefined &&
          hit.loadedAt + options.versionedTrustMs > now);
      if (trusted) return hit.caller ? Promise.resolve(hit.caller) : Promise.reject(unknownKey());
    }
    return this.lookupCaller(hash).then(callerOrThrow);
  }

  /**
   * The same answer as `authenticate` for a caller already known by key id (an OAuth access token acting as its key,
   * on the agent-tool server, where no plaintext key is at hand): the key's hash is read by id, then the cached lookup.
   */
  async authenticateKeyId(keyId: string): Promise<{ principal: Principal; key: KeyAuth }> {
    const [row] = await this.orm.em
      .fork()
      .execute<{ key_hash: string }[]>(`select key_hash from api_keys where id = ? and revoked_at is null`, [keyId]);
    return callerOrThrow(row ? await this.lookupCaller(row.key_hash) : null);
  }

  /**
   * Re-read a key from Postgres (the admission found its cached copy older than `version`, the org's key version it
   * read from the shared state before this read): the new copy carries that version. Null: revoked or gone.
   */
  async refresh(keyId: string, version: string): Promise<KeyAuth | null> {
    const [row] = await this.orm.em
      .fork()
      .execute<{ key_hash: string }[]>(`select key_hash from api_keys where id = ?`, [keyId]);
    if (!row) return null;
    this.cache.delete(row.key_hash);
    return (await this.lookup(row.key_hash, version)).value;
  }

  private async lookupCaller(hash: string): Promise<KeyCaller | null> {
    return (await this.lookup(hash)).caller;
  }

  /** Reads of a key in flight (one per key hash at a time: a burst of calls on an expired copy shares one). */
  private readonly reading = new Map<string, Promise<CacheEntry>>();

  /** The cache entry for a key hash: the cached one while fresh, else a new one read from Postgres. */
  private lookup(hash: string, version?: string): Promise<CacheEntry> {
    const hit = this.cache.get(hash);
    if (hit && hit.expiresAt > Date.now()) return Promise.resolve(hit);
    const slot = version === undefined ? hash : `${hash}|${version}`;
    let reading = this.reading.get(slot);
    if (!reading) {
      reading = this.read(hash, version).finally(() => this.reading.delete(slot));
      this.reading.set(slot, reading);
    }
    return reading;
  }

  private async read(hash: string, version: string | undefined): Promise<CacheEntry> {
    const now = Date.now();

    const em = this.orm.em.fork();
    const row = await em.findOne(
      ApiKey,
      { keyHash: hash },
      {
        fields: [
          'id',
          'org',
          'parentKey',
          'keyPrefix',
          'scopes',
          'budgetCents',
          'perCallMaxCents',
          'dailyCapCents',
          'approvalMode',
          'approvedCents',
          'revokedAt',
        ],
      },
    );
    const ancestors = row?.parentKey && !row.revokedAt ? await this.ancestors(em, row.parentKey.id) : [];
    const value: KeyAuth | null =
      row && !row.revokedAt && ancestors !== null
        ? {
            keyId: row.id,
            orgId: row.org.id,
            keyPrefix: row.keyPrefix,
            scopes: row.scopes as Scope[],
            budgetCents: row.budgetCents ?? null,
            perCallMaxCents: row.perCallMaxCents ?? null,
            dailyCapCents: row.dailyCapCents ?? null,
            approvalMode: row.approvalMode,
            approvedCents: row.approvedCents,
            ancestors,
            version,
          }
        : null;
    if (this.cache.size >= this.maxEntries) {
      // Map keeps insertion order: drop the oldest entry.
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
    const entry: CacheEntry = {
      value,
      caller: keyCaller(value),
      expiresAt: now + (value ? this.cacheTtlMs : this.negativeTtlMs),
      loadedAt: now,
    };
    this.cache.set(hash, entry);
    return entry;
  }

  /**
   * The chain above a key, nearest first, or null when any of it is revoked (revoking a key revokes its
   * descendants; this guards the moment in between). Bounded: chains are at most MAX_KEY_DEPTH deep.
   */
  private async ancestors(em: EntityManager, parentId: string): Promise<KeyAncestor[] | null> {
    const rows = await em.execute<
      { id: string; budget_cents: string | null; daily_cap_cents: string | null; revoked_at: Date | null }[]
    >(
      `with recursive chain as (
         select id, parent_key_id, budget_cents, daily_cap_cents, revoked_at, 1 as depth from api_keys where id = ?
         union all
         select k.id, k.parent_key_id, k.budget_cents, k.daily_cap_cents, k.revoked_at, c.depth + 1
           from api_keys k join chain c on k.id = c.parent_key_id
          where c.depth <= ?
       )
       select id, budget_cents, daily_cap_cents, revoked_at from chain order by depth`,
      [parentId, MAX_KEY_DEPTH],
    );
    if (rows.some((r) => r.revoked_at)) return null;
    const cents = (v: string | null) => (v == null ? null : Number(v));
    return rows.map((r) => ({
      keyId: r.id,
      budgetCents: cents(r.budget_cents),
      dailyCapCents: cents(r.daily_cap_cents),
    }));
  }

  /** Drop a key from every process's cache (after revoke, scope or cap changes). */
  async invalidate(keyHash: string, orgId?: string): Promise<void> {
    await this.invalidateMany([keyHash], orgId);
  }

  /**
   * Drop keys from every process's cache: a key and its descendants, whose cached ancestors changed with it. With
   * their org, the org's key version is bumped first in the gateways' shared state, so the next admission anywhere
   * sees the change even if the pub/sub message is lost (issue 21, item 12).
   */
  async invalidateMany(keyHashes: readonly string[], orgId?: string): Promise<void> {
    for (const h of keyHashes) this.cache.delete(h);
    if (orgId !== undefined && this.spend) {
      await this.spend.keysChanged(orgId).catch((err: unknown) => {
        // Redis down: no gateway admits paid calls now, and free ones fall back to the cache TTL.
        this.logger.error({ err, org_id: orgId }, 'key version bump failed');
      });
    }
    try {
      await Promise.all(keyHashes.map((h) => this.counters.publish(KEY_INVALIDATION_CHANNEL, h)));
    } catch (err) {
      // The local cache is already clean; other processes fall back to the cache TTL.
      this.logger.error({ err }, 'key invalidation publish failed');
    }
  }
}
