/**
 * SpendStore on Redis (a single server or a Redis Cluster): each operation is one Lua script (atomic, one round trip).
 *
 * Key layout, under the store's prefix. Every key carries a hash tag `{N}`, N the org's spend bucket (0..1023, a
 * fixed hash of the org id, `spendBucket`), so every key of one org's fast state lives in one Cluster hash slot and
 * every script touches one slot:
 *
 *   sp:{N}:o:{org}                  org: bal, ver, mode, susp, res, pend, pn, t, lim, gen
 *   sp:{N}:k:{key}                  key: sp, res, pend
 *   sp:{N}:d:{key}:{day}            key's UTC day: sp, res, pend (expires after 3 days)
 *
 * A key's `sp`, `res` and `pend` (and its day's) count the key's own calls and those of every key below it (its
 * child keys): a child's call is held on, and booked to, each ancestor and each ancestor's day too.
 *   sp:{N}:rl:{key prefix}:{minute} rate window of a key prefix
 *   sp:{N}:i:{scoped idempotency}   idempotency record (the scoped key starts with the org id)
 *   sp:{N}:resv                     the bucket's open reservations by expiry, each member carrying what voiding needs
 *   sp:{N}:u                        the bucket's usage stream (group `drain`): calls settled, not yet in Postgres
 *   sp:{N}:sn:{org}                 the org's seen set: short hashes of every idempotent call it booked
 *   sp:{N}:sx:{org}                 the seen set's state: ep (rebuild epoch), ok (1 = the set is complete)
 *   sp:buckets                      the buckets any process has written reservations or usage to (see `inBucket`)
 *
 * `res` is held by open reservations; `pend` is spend settled but not yet acknowledged by Postgres (the drainer's
 * ack moves it into `sp`/`bal` from Postgres's totals); `pn` counts the org's usage events not yet in Postgres. The
 * settle script appends the call to the stream and delivers it to its own consumer in the same step, so a call is
 * always in some drainer's pending list (claimable after that drainer stops acknowledging: `claimUsage`).
 *
 * Why buckets, not the org id itself as the tag: the open reservations must be findable by the sweeper ("a reservation
 * is voided within GATEWAY_UPSTREAM_TIMEOUT_MS + 10 s + one sweep even if its gateway died"). With the org as the tag,
 * the only key the admission script could index the reservation in is one of that org's own, and the sweeper would
 * need a second, cross-slot list of orgs with open reservations, written outside the script: a gateway dying between
 * the two writes leaves a reservation nobody finds, and removing an org from that list races with a new admission.
 * A bucket's reservation set is in the bucket's slot, so the admission indexes its reservation atomically, exactly as
 * on a single server, and the sweeper reads the 1,024 sets (`expired`; one pipelined round per node with auto
 * pipelining). 1,024 buckets spread over 1,024 slots, enough to balance a cluster of up to a few hundred masters.
 *
 * Upgrade from the untagged layout (`sp:o:…`, `sp:k:…`, `sp:resv`): the old keys are no longer read. The fast state
 * is a cache of Postgres, so the new keys are hydrated from Postgres on the first call of each org. Reservations open
 * in the old `sp:resv` at the upgrade hold only old keys nobody reads, so nothing is left to release; what voiding one
 * would still do is fence its call (a failed usage row), which only matters when a void refunds a hold — here none
 * is counted anywhere, and a late commit of such a call charges a call that did run, through Postgres's own checks.
 * Old gateway processes keep sweeping their own reservations while they run. The leftovers (`sp:o:*`, `sp:k:*`,
 * `sp:resv` have no expiry) may be deleted once no old process runs; see docs/operations.md.
 */
import type { Cluster, Redis } from 'ioredis';
import { systemClock, type Clock } from '../clock.js';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { SPEND_SCRIPTS } from './redis-spend-lua.js';
import {
  bucketResvKey,
  CLAIM_WAVE,
  streamedCalls,
  idempotencyRecordKey,
  memberOf,
  orgKey,
  parseMember,
  rateWindowKey,
  seenKey,
  seenStateKey,
  SPEND_BUCKETS,
  spendBucket,
  usageStreamKey,
} from './redis-spend-keys.js';
import {
  ackArgs,
  admitArgs,
  admitKeys,
  heldKeys,
  hydrateCall,
  leaseArgs,
  leaseKeys,
  leaseMember,
  leaseReturnKeys,
  settleArgs,
} from './redis-spend-args.js';
import { admission, leaseGrant, settled } from './redis-spend-replies.js';
import type {
  Admission,
  AdmitInput,
  HydrateInput,
  LeaseGrant,
  LeaseInput,
  LeaseRef,
  ReservationRef,
  SettleBatchOutcome,
  SettleInput,
  SettleOutcome,
  SpendStore,
  StreamedUsage,
  UsageAck,
  UsageEntryRef,
  ScanPart,
} from './spend-store.js';

export { idempotencyRecordKey, rateWindowKey, SPEND_BUCKETS, spendBucket, usageStreamKey } from './redis-spend-keys.js';

/** The set of buckets in use (no hash tag: one slot of its own; read and written by plain commands). */
const BUCKETS_KEY = 'sp:buckets';
/**
 * Besides the buckets listed in use, the periodic scans visit every bucket once per this many full scans (a backstop
 * for a list lost with the fast state: 1,024 buckets in ~30 cycles of the sweeper or the claims, about a minute).
 */
const FULL_COVER_CYCLES = 30;
/** The list of buckets in use is read again after this long. */
const BUCKETS_REFRESH_MS = 1_000;

export class RedisSpendStore implements SpendStore {
  /** Where the next `expired` starts, so a crowded bucket cannot starve the others of the sweeper's limit. */
  private nextBucket = 0;
  private nextClaimBucket = 0;
  /** Scan ticks so far (the sweeper's, the claims'): which buckets in use this tick visits. */
  private readonly ticks = { expired: 0, claim: 0 };
  /** Buckets this process has listed in `sp:buckets` (and those being listed). */
  private readonly listed = new Set<number>();
  private readonly listing = new Map<number, Promise<void>>();
  private inUse: { at: number; buckets: number[] } | null = null;
  /** This process's name in the usage streams' consumer group (its pending entries are its claim tickets). */
  readonly consumer: string;

  constructor(
    private readonly redis: Redis | Cluster,
    options: { consumer?: string; clock?: Clock } = {},
  ) {
    this.consumer = options.consumer ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
    this.clock = options.clock === systemClock ? undefined : options.clock;
    // No fixed key counts: each call says how many keys follow (ancestors vary per key; settles batch). On a cluster
    // the client runs without auto pipelining (core/counters/redis-store.ts), which would route a script by its first
    // argument, here the key count; each command is routed by its declared keys instead.
    for (const [name, lua] of Object.entries(SPEND_SCRIPTS)) redis.defineCommand(name, { lua });
  }

  /**
   * Deadlines are on Redis's clock (redis-spend-lua.ts), never the gateway's: the scripts ignore the callers' `nowMs`.
   * Only a test's own clock (a ManualClock moved ahead) shifts this store's view, by its lead over the wall clock,
   * which is 0 for the system clock however wrong the machine's time is.
   */
  private readonly clock: Clock | undefined;
  private offsetMs(): number {
    return this.clock ? this.clock.now().getTime() - Date.now() : 0;
  }

  private run<T>(
    name: keyof typeof SPEND_SCRIPTS,
    keys: readonly string[],
    args: readonly (string | number)[],
  ): Promise<T> {
    const call = (this.redis as unknown as Record<string, (...a: (string | number)[]) => Promise<T>>)[name]!;
    return call.call(this.redis, keys.length, ...keys, ...args);
  }

  /**
   * Every bucket is listed in `sp:buckets` before this process first writes a reservation or a usage entry to it, so
   * the sweeper and the claims of every process visit the buckets in use each cycle instead of all 1,024 (at 1,024
   * scripts per cycle the scans cost more than the calls). One SADD per bucket per process, awaited by the first
   * write only; the list is sent again each full claim cycle (a fast state that lost it gets it back within one), and
   * the scans still visit every bucket once per FULL_COVER_CYCLES as a backstop.
   */
  private inBucket(orgId: string): Promise<void> | undefined {
    const bucket = spendBucket(orgId);
    if (this.listed.has(bucket)) return undefined;
    let listing = this.listing.get(bucket);
    if (!listing) {
      listing = this.redis
        .sadd(BUCKETS_KEY, String(bucket))
        .then(() => {
          this.listed.add(bucket);
        })
        .finally(() => this.listing.delete(bucket));
      this.listing.set(bucket, listing);
    }
    return listing;
  }

  /** The buckets a scan tick visits: those in use whose turn it is (bucket mod parts), and a slice of all of them. */
  private async scanBuckets(
    part: ScanPart,
    tick: number,
    rotation: 'nextBucket' | 'nextClaimBucket',
  ): Promise<number[]> {
    const now = Date.now();
    if (!this.inUse || now - this.inUse.at >= BUCKETS_REFRESH_MS) {
      const members = await this.redis.smembers(BUCKETS_KEY);
      this.inUse = {
        at: now,
        buckets: members.map(Number).filter((b) => Number.isInteger(b) && b >= 0 && b < SPEND_BUCKETS),
      };
    }
    const turn = tick % part.of;
    const out = new Set(this.inUse.buckets.filter((b) => b % part.of === turn));
    const slice = Math.ceil(SPEND_BUCKETS / (part.of * FULL_COVER_CYCLES));
    const start = this[rotation];
    this[rotation] = (start + slice) % SPEND_BUCKETS;
    for (let i = 0; i < slice; i++) out.add((start + i) % SPEND_BUCKETS);
    return [...out];
  }

  async admit(a: AdmitInput): Promise<Admission> {
    const listing = this.inBucket(a.orgId);
    if (listing) await listing;
    const ancestorIds = a.ancestors.map((x) => x.keyId);
    const reply = await this.run<string[]>(
      'spAdmit',
      admitKeys(a, ancestorIds),
      admitArgs(a, ancestorIds, this.offsetMs()),
    );
    return admission(reply, a.ancestors);
  }

  async settle(s: SettleInput): Promise<SettleOutcome> {
    return (await this.settleBatch([s])).results[0]!;
  }

  /**
   * Calls settle together when they share a batch key: on a single server every call (one script per batch, whatever
   * the orgs: a thousand keys of ten orgs share it, issue 32's scale row); on a cluster the org's bucket (a script
   * touches one slot).
   */
  batchKey(orgId: string): string {
    return this.redis.isCluster ? String(spendBucket(orgId)) : '';
  }

  /** One script for the batch (every org in one bucket, or any buckets on a single server): see SETTLE. */
  async settleBatch(batch: readonly SettleInput[]): Promise<SettleBatchOutcome> {
    const listings: Promise<void>[] = [];
    for (const s of batch) {
      const listing = this.inBucket(s.orgId);
      if (listing) listings.push(listing);
    }
    if (listings.length > 0) await Promise.all(listings);
    const bucket = spendBucket(batch[0]!.orgId);
    const keys = [usageStreamKey(bucket)];
    const args = settleArgs(batch, this.consumer, keys);
    return settled(await this.run<string[]>('spSettle', keys, args), batch.length, bucket);
  }

  async void(r: ReservationRef): Promise<boolean> {
    const [open] = await this.runVoid(r, '');
    return open === 1;
  }

  async fail(r: ReservationRef, failedEvent: string): Promise<UsageEntryRef> {
    const [, id] = await this.runVoid(r, failedEvent);
    return { stream: String(spendBucket(r.orgId)), id: String(id) };
  }

  private async runVoid(r: ReservationRef, failedEvent: string): Promise<[number, string | number]> {
    const listing = this.inBucket(r.orgId);
    if (listing) await listing;
    return this.run<[number, string | number]>('spVoid', heldKeys(r), [
      r.priceCents,
      memberOf(r),
      r.idempotencyKey === null ? '0' : '1',
      r.reservationId,
      failedEvent,
      this.consumer,
    ]);
  }

  async lease(l: LeaseInput): Promise<LeaseGrant> {
    const listing = this.inBucket(l.orgId);
    if (listing) await listing;
    const rateWindow = rateWindowKey(l.orgId, l.rateKey, Math.floor(l.nowMs / 60_000));
    const reply = await this.run<string[]>('spLease', leaseKeys(l, rateWindow), leaseArgs(l, this.offsetMs()));
    return leaseGrant(reply, rateWindow);
  }

  async returnLease(ref: LeaseRef, keepCents: number, unusedTokens: number): Promise<void> {
    await this.run<number>('spLeaseReturn', leaseReturnKeys(ref), [leaseMember(ref), keepCents, unusedTokens]);
  }

  /**
   * One script per bucket (a script touches one slot), the buckets' scripts concurrently. Per entry its releases,
   * summed per key and field (see ACK); Postgres's newest totals once per org and key.
   */
  async ackUsage(acks: readonly UsageAck[]): Promise<void> {
    const byStream = new Map<string, Map<string, UsageAck[]>>();
    for (const a of acks) {
      let entries = byStream.get(a.entry.stream);
      if (!entries) byStream.set(a.entry.stream, (entries = new Map<string, UsageAck[]>()));
      const calls = entries.get(a.entry.id);
      if (calls) calls.push(a);
      else entries.set(a.entry.id, [a]);
    }
    await Promise.all(
      [...byStream].map(([stream, entries]) => {
        const { keys, args } = ackArgs(Number(stream), entries);
        return this.run<number>('spAck', keys, args);
      }),
    );
  }

  /**
   * The buckets' streams (concurrently) until `limit` entries are claimed: every bucket without `part`; with it, the
   * buckets in use whose turn it is and a rotating slice of all (`scanBuckets`).
   */
  async claimUsage(minIdleMs: number, limit: number, part?: ScanPart): Promise<StreamedUsage[]> {
    let buckets: number[];
    if (part) {
      const tick = this.ticks.claim++;
      // Once per full cycle this process lists its buckets again (a fast state that lost the list has it back).
      if (tick % part.of === 0 && this.listed.size > 0)
        await this.redis.sadd(BUCKETS_KEY, ...[...this.listed].map(String));
      buckets = await this.scanBuckets(part, tick, 'nextClaimBucket');
    } else {
      const start = this.nextClaimBucket;
      this.nextClaimBucket = (this.nextClaimBucket + 1) % SPEND_BUCKETS;
      buckets = Array.from({ length: SPEND_BUCKETS }, (_, i) => (start + i) % SPEND_BUCKETS);
    }
    const out: StreamedUsage[] = [];
    for (let i = 0; i < buckets.length && out.length < limit; i += CLAIM_WAVE) {
      const wave = buckets.slice(i, i + CLAIM_WAVE);
      const found = await Promise.all(
        wave.map((b) =>
          this.run<[string, string[] | null][]>('spClaim', [usageStreamKey(b)], [this.consumer, minIdleMs, limit]),
        ),
      );
      found.forEach((entries, j) => {
        for (const [id, fields] of entries) {
          if (!fields) continue; // deleted meanwhile
          out.push({ entry: { stream: String(wave[j]), id }, calls: streamedCalls(fields) });
        }
      });
    }
    return out;
  }

  async pendingUsage(orgId: string): Promise<number> {
    return Number((await this.redis.hget(orgKey(orgId), 'pn')) ?? 0);
  }

  async hydrate(h: HydrateInput): Promise<void> {
    const { keys, args } = hydrateCall(h, this.offsetMs());
    await this.run<number>('spHydrate', keys, args);
  }

  async keysChanged(orgId: string): Promise<void> {
    await this.run<number>('spKeysChanged', [orgKey(orgId)], []);
    this.orgChanged(orgId);
  }

  async forgetOrg(orgId: string): Promise<void> {
    await this.run<number>('spForget', [orgKey(orgId)], []);
    this.orgChanged(orgId);
  }

  private readonly orgListeners: ((orgId: string) => void)[] = [];
  onOrgChange(listener: (orgId: string) => void): void {
    this.orgListeners.push(listener);
  }
  private orgChanged(orgId: string): void {
    for (const listener of this.orgListeners) listener(orgId);
  }

  /**
   * The buckets' sets are read (concurrently: auto pipelining sends them as one batch per node) until `limit`
   * reservations are found: every bucket from a rotating first one without `part`; with it, the buckets in use whose
   * turn it is and a rotating slice of all (`scanBuckets`).
   */
  async expired(_nowMs: number, limit: number, part?: ScanPart): Promise<ReservationRef[]> {
    let order: number[];
    if (part) {
      order = await this.scanBuckets(part, this.ticks.expired++, 'nextBucket');
    } else {
      const start = this.nextBucket;
      this.nextBucket = (this.nextBucket + 1) % SPEND_BUCKETS;
      order = Array.from({ length: SPEND_BUCKETS }, (_, i) => (start + i) % SPEND_BUCKETS);
    }
    const found = await Promise.all(
      order.map((b) => this.run<string[]>('spExpired', [bucketResvKey(b)], [limit, this.offsetMs()])),
    );
    return found.flat().slice(0, limit).map(parseMember);
  }

  /** One SADD per org (an org's set lives in its own slot), concurrently. */
  async addSeen(entries: readonly { orgId: string; hash: string }[]): Promise<void> {
    const byOrg = new Map<string, string[]>();
    for (const e of entries) byOrg.set(e.orgId, [...(byOrg.get(e.orgId) ?? []), e.hash]);
    await Promise.all([...byOrg].map(([orgId, hashes]) => this.redis.sadd(seenKey(orgId), ...hashes)));
  }

  seenEpoch(orgId: string): Promise<string> {
    return this.run<string>('spSeenEpoch', [seenStateKey(orgId)], [randomBytes(6).toString('hex')]);
  }

  async completeSeen(orgId: string, epoch: string): Promise<boolean> {
    return (await this.run<number>('spSeenComplete', [seenStateKey(orgId)], [epoch])) === 1;
  }

  async idempotencyRecord(key: string): Promise<string | null> {
    return this.redis.get(idempotencyRecordKey(key));
  }
}
