/**
 * The first phase of a gateway call's two-phase transfer (DESIGN.md, Money and the hot path): `Admissions.admit`
 * decides, before any upstream call, whether a call may spend, and returns a typed decision:
 *
 * - a `Reservation` (core/spend/settlement.ts) holding the price, to be ended by `commit` or `void`; its kind is
 *   `degraded` for a free call made while the fast state is down (nothing held, the call is still recorded);
 * - `replay`: the stored answer of an earlier call with the same Idempotency-Key;
 * - `refused`: the error to answer (idempotency mismatch, rate limit 429, spend governance 402).
 *
 * It throws only when the call cannot be accounted for (503): the fast state is down for a paid call, the account
 * state cannot be loaded, the first request with the key is still running, or Postgres cannot check the key.
 *
 * Order: answers this process already knows (a stored replay, a key prefix over its limit) → one SpendStore.admit
 * (idempotent replay, rate limit, governance, reservation in one step), rebuilding a cold fast state from Postgres
 * and waiting out a concurrent duplicate → for an idempotent call, Postgres's record of the key (the backstop when
 * the fast state forgot it). `Admissions` is also the process's settlement context: in-process replays, the usage
 * drain.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Clock } from '../clock.js';
import { AppError, RateLimitedError, ServiceUnavailableError, UnauthenticatedError } from '../errors.js';
import type { KeyAuth, KeysService } from '../keys/keys.service.js';
import type { Logger } from '../logger.js';
import type { Config } from '../config.js';
import type { Metrics } from '../metrics/metrics.js';
import { idempotencyMismatch, keyGovernance, refusalError } from './admission-refusals.js';
import {
  admitInput,
  outcomeOf,
  refused,
  replayOf,
  type AdmissionDecision,
  type AdmitRequest,
} from './admission-input.js';
import { loadSnapshot } from './admission-snapshot.js';
import { findIdempotencyRecord } from './idempotency-records.js';
import { SeenKeys } from './idempotency-seen.js';
import { ExpiringMemo } from './local-memo.js';
import { Reservation, type SettlementContext } from './settlement.js';
import { SettleBatcher } from './settle-batcher.js';
import { LEASE_WINDOW_MS, LeaseBook, type Lease } from './leases.js';
import type { Admission, AdmitInput, SeenCheck, SpendStore } from './spend-store.js';
import { RateTokens } from './rate-tokens.js';
import { admitLeased, takeLeased, type LeasingContext } from './admission-leased.js';
import type { UsageDrain } from './usage-drain.js';
import type { UsageCommitter } from './usage-committer.js';

export { RESERVATION_MARGIN_MS, type AdmissionDecision, type AdmitRequest } from './admission-input.js';

/** How long this process keeps a replay it has seen (the shared record lives 25 h in the fast state). */
const LOCAL_REPLAY_TTL_MS = 3_600_000;

/** What admission takes from the composition root (platform/services.ts). */
interface AdmissionServices {
  readonly spend: SpendStore;
  readonly orm: MikroORM;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly config: Config;
  readonly keys?: KeysService;
  readonly metrics?: Metrics;
}

export class Admissions implements SettlementContext {
  readonly spend: SpendStore;
  readonly orm: MikroORM;
  readonly clock: Clock;
  readonly log: Logger;
  /** Stored replays by scoped idempotency key (immutable once written, so safe to keep in process). */
  private readonly replays = new ExpiringMemo<string>(50_000);
  /** Keys whose version the shared state matched in the last second (an admission or a lease of theirs went through). */
  private readonly vouched = new ExpiringMemo<true>(50_000);
  private vouch(keyId: string): void {
    this.vouched.set(keyId, true, Date.now() + 1_000);
  }
  /** Key prefixes over their rate limit, until their window ends. */
  private readonly rateBlocked = new ExpiringMemo<number>(50_000);
  /** The seen sets' process side: may a first-seen key skip Postgres, rebuilds, direct bookings (issue 21 item 14). */
  readonly seen: SeenKeys;
  readonly settler: SettleBatcher;

  constructor(
    private readonly services: AdmissionServices,
    readonly committer: UsageCommitter,
    readonly drain: UsageDrain,
  ) {
    this.spend = services.spend;
    this.orm = services.orm;
    this.clock = services.clock;
    this.log = services.logger.child({ surface: 'gateway' });
    this.seen = new SeenKeys(services).start();
    this.settler = new SettleBatcher(this.spend, drain);
    const spend = this.spend;
    if (services.config.gateway.leases && spend.lease && spend.returnLease) {
      this.leases = new LeaseBook(
        {
          lease: (input) => spend.lease!(input),
          returnLease: (ref, keep, tokens) => spend.returnLease!(ref, keep, tokens),
        },
        this.log,
        () => this.clock.now().getTime(),
      );
      const leases = this.leases;
      spend.onOrgChange?.((orgId) => leases.dropOrg(orgId));
      this.leasing = {
        book: leases,
        tokens: new RateTokens(
          {
            lease: (input) => spend.lease!(input),
            returnLease: (ref, keep, tokens) => spend.returnLease!(ref, keep, tokens),
          },
          this.log,
          () => this.clock.now().getTime(),
        ),
        vouch: (keyId) => this.vouch(keyId),
        refresh: (orgId, generation) => this.refresh(orgId, generation),
        hydrate: (input, generation) => this.hydrate(input, generation),
        reloadKey: (key, version) => this.reloadKey(key, version),
        reservation: (req, input, leased) => this.reservation('leased', req, input, leased),
      };
    }
  }

  /** What the lease paths (core/spend/admission-leased.ts) use of this admission. */
  private readonly leasing: LeasingContext | undefined;

  /** Leases (core/spend/leases.ts), when the store supports them and GATEWAY_LEASES is on. */
  readonly leases: LeaseBook | undefined;

  /** Stop the background work (the unsynced loop). */
  close(): Promise<void> {
    this.leases?.closeAll();
    this.leasing?.tokens.close();
    return this.seen.stop();
  }

  /** Reservations this process holds (id → admitted at, ms), for the operators' metrics. */
  private readonly open = new Map<string, number>();

  /** Decide one call (see the file header), counted by outcome for the operators' metrics. */
  async admit(req: AdmitRequest): Promise<AdmissionDecision> {
    const decision = await this.decideCall(req);
    this.services.metrics?.admissions.inc({ outcome: outcomeOf(decision) });
    return decision;
  }

  /** What the metrics read at scrape time: how many reservations are open and the oldest one's age. */
  reservations(nowMs = Date.now()): { open: number; oldestAgeSeconds: number } {
    let oldest = nowMs;
    for (const [id, at] of this.open) {
      // A reservation this process lost track of (an exception between admission and its end) is not kept forever.
      if (nowMs - at > 600_000) this.open.delete(id);
      else if (at < oldest) oldest = at;
    }
    return { open: this.open.size, oldestAgeSeconds: (nowMs - oldest) / 1000 };
  }

  /** A reservation ended (settled, voided or released). */
  ended(reservationId: string): void {
    this.open.delete(reservationId);
  }

  private async decideCall(req: AdmitRequest): Promise<AdmissionDecision> {
    const nowMs = req.now.getTime();
    let { key } = req;
    const scopedKey = req.clientKey === null ? null : `${req.orgId}:${key.keyId}:${req.clientKey}`;
    const known = this.knownAnswer(scopedKey, key, req.requestHash, nowMs);
    if (known !== undefined) return known;
    if (req.priceCents !== 0 && this.spend.refusal) {
      throw new ServiceUnavailableError(`The gateway cannot account for paid calls: ${this.spend.refusal.message}`);
    }
    const input = admitInput(req, scopedKey, nowMs, this.services, this.seen.fastPath());
    if (this.leases && req.clientKey === null) {
      const pending = this.leased(req, input);
      // The common case (a lease this process holds) without a promise.
      const leased = pending instanceof Promise ? await pending : pending;
      if (leased) return leased;
      key = req.key;
    }
    const deadline = Date.now() + this.services.config.gateway.upstreamTimeoutMs + 5_000;
    // A refusal while leases admit elsewhere on the org: their unused part comes back within a lease's window.
    const recallUntil = Date.now() + LEASE_WINDOW_MS + 500;
    let recallDelay = 12;
    let delay = 5;
    for (let attempt = 0; ; attempt++) {
      let admission: Admission;
      try {
        admission = await this.spend.admit(input);
        if (admission.outcome === 'hydrate') {
          await this.hydrate(input, admission.generation);
          if (attempt < 3) continue;
        }
        if (admission.outcome === 'stale_key' && attempt < 3) {
          key = await this.reloadKey(key, admission.version);
          Object.assign(input, keyGovernance(key), { keyVersion: admission.version });
          continue;
        }
      } catch (err) {
        return this.storeDown(err, req, input);
      }
      if (admission.outcome === 'admitted' || admission.outcome === 'replay') this.vouch(input.keyId);
      if (admission.outcome === 'admitted') {
        if (admission.stale) this.refresh(input.orgId, admission.generation);
        return this.reserve('admitted', req, input, admission.idempotency);
      }
      if (admission.outcome === 'leased') {
        // Wait for the recalled leases' unused part; past the wait, the refusal is the answer.
        if (Date.now() >= recallUntil) input.noRecall = true;
        else await new Promise((r) => setTimeout(r, (recallDelay = Math.min(recallDelay * 2, 200))));
        continue;
      }
      if (admission.outcome !== 'in_flight') return this.decide(admission, input, key);
      if (Date.now() > deadline) {
        throw new ServiceUnavailableError('The first request with this Idempotency-Key is still running.');
      }
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 50);
    }
  }

  /**
   * A call without an Idempotency-Key admitted on a lease (core/spend/admission-leased.ts): at once when this process
   * holds one, after asking for one otherwise; undefined: call by call. A failing store is left to the call-by-call
   * path (503 for a paid call, a degraded free call).
   */
  private leased(req: AdmitRequest, input: AdmitInput): Reservation | undefined | Promise<Reservation | undefined> {
    const taken = takeLeased(this.leasing!, req, input);
    if (taken === 'exact') return undefined;
    if (taken !== 'acquire') return taken;
    return admitLeased(this.leasing!, req, input).catch((err: unknown) => {
      if (err instanceof AppError) throw err;
      return undefined;
    });
  }

  /** The store could not answer (a failing Redis): 503 for a paid call; a free call is served, unmetered. */
  private storeDown(err: unknown, req: AdmitRequest, input: AdmitInput): Reservation | Promise<AdmissionDecision> {
    if (err instanceof AppError) throw err;
    if (input.priceCents !== 0) {
      throw new ServiceUnavailableError('The gateway cannot account for paid calls right now; retry shortly.', {
        cause: err,
      });
    }
    this.log.warn({ err, request_id: req.requestId }, 'counter store unavailable; free call served unmetered');
    return this.reserve('degraded', req, input);
  }

  remember(scopedKey: string, record: string, nowMs: number): void {
    this.replays.set(scopedKey, record, nowMs + LOCAL_REPLAY_TTL_MS);
  }

  /** Answers that cannot have changed since this process last saw them: a stored replay, a prefix over its limit. */
  private knownAnswer(
    scopedKey: string | null,
    key: KeyAuth,
    requestHash: string,
    nowMs: number,
  ): AdmissionDecision | undefined {
    const rateKey = key.keyPrefix;
    // A stored replay only for a key the shared state vouched for within the last second (its version matched): the
    // gateway trusts a versioned key copy longer, and a revoked key must not be answered from memory past 1 s.
    if (scopedKey !== null && this.vouched.get(key.keyId, Date.now()) !== undefined) {
      const known = this.replays.get(scopedKey, nowMs);
      if (known !== undefined) return replayOf(known, requestHash);
    }
    const blockedUntil = this.rateBlocked.get(rateKey, nowMs);
    if (blockedUntil === undefined) return undefined;
    return refused(new RateLimitedError((blockedUntil - nowMs) / 1000, 'Rate limit for this key exceeded.'));
  }

  /**
   * The key changed since this process read it (the org's key version moved: a revocation, a cap or scope change,
   * issue 21 item 12): read it again from Postgres, under the version the admission reported. Revoked: 401.
   */
  private async reloadKey(key: KeyAuth, version: string): Promise<KeyAuth> {
    const fresh = await this.services.keys!.refresh(key.keyId, version);
    if (!fresh) throw new UnauthenticatedError('Unknown or revoked API key.');
    return fresh;
  }

  /** The fast state is missing this org or key: rebuild it from Postgres. */
  private async hydrate(input: AdmitInput, generation: number | undefined): Promise<void> {
    const ancestorKeyIds = input.ancestors.map((a) => a.keyId);
    const snapshot = await loadSnapshot(this.services, input.orgId, input.keyId, input.day, ancestorKeyIds);
    await this.spend.hydrate({ ...snapshot, generation, nowMs: input.nowMs });
  }

  /** Every outcome of SpendStore.admit other than a reservation or a wait. */
  private decide(admission: Admission, input: AdmitInput, key: KeyAuth): AdmissionDecision {
    switch (admission.outcome) {
      case 'replay':
        this.remember(input.idempotencyKey!, admission.record, input.nowMs);
        return { kind: 'replay', record: admission.record };
      case 'mismatch':
        return refused(idempotencyMismatch());
      case 'rate_limited': {
        const until = input.nowMs + admission.retryAfterMs;
        this.rateBlocked.set(input.rateKey, until, until);
        return refused(new RateLimitedError(admission.retryAfterMs / 1000, 'Rate limit for this key exceeded.'));
      }
      case 'suspended':
      case 'per_call':
      case 'budget':
      case 'daily_cap':
      case 'funds':
      case 'credit_limit': {
        const approval = key.approvalMode ? key : undefined;
        return refused(refusalError(admission, input, approval, this.services.config.urls.publicBase));
      }
      default:
        throw new ServiceUnavailableError('The gateway could not load the account state; retry shortly.');
    }
  }

  /**
   * The reservation; for an idempotent call, first Postgres's record of the key, which the fast state lacked, unless
   * the org's seen set proves the key new (`seen`: the admission's check, undefined when it made none).
   */
  private reserve(
    kind: Reservation['kind'],
    req: AdmitRequest,
    input: AdmitInput,
    seen?: SeenCheck,
  ): Reservation | Promise<AdmissionDecision> {
    if (kind === 'admitted') this.open.set(input.reservationId, Date.now());
    const reservation = this.reservation(kind, req, input);
    if (req.clientKey === null || seen === 'new') return reservation;
    if (seen === 'unstamped') this.seen.rebuild(input.orgId);
    this.services.metrics?.idempotencyLookups.inc({ reason: seen ?? (input.fastPath ? 'unchecked' : 'unsynced') });
    return this.storedReplay(reservation);
  }

  /** The call's reservation (core/spend/settlement.ts); with `leased`, the lease it was admitted against. */
  private reservation(
    kind: Reservation['kind'],
    req: AdmitRequest,
    input: AdmitInput,
    leased?: { lease: Lease; book: LeaseBook },
  ): Reservation {
    return new Reservation(
      this,
      kind,
      input.orgId,
      input.keyId,
      input.ancestors.map((a) => a.keyId),
      input.day,
      input.priceCents,
      input.reservationId,
      input.idempotencyKey,
      req.clientKey,
      req.requestHash,
      input.nowMs,
      leased,
    );
  }

  /**
   * The fast state knows nothing of this key: Postgres, the system of record, may (a flushed Redis, a lost settle).
   * When it does, this admission's hold is released (nothing will be spent) before the replay is answered.
   */
  private async storedReplay(reservation: Reservation): Promise<AdmissionDecision> {
    let stored: string | null;
    try {
      stored = await findIdempotencyRecord(this.orm, reservation.orgId, reservation.keyId, reservation.clientKey!);
    } catch (err) {
      await reservation.release();
      throw new ServiceUnavailableError('The gateway cannot check this Idempotency-Key right now; retry shortly.', {
        cause: err,
      });
    }
    if (stored === null) return reservation;
    await reservation.release();
    const decision = replayOf(stored, reservation.requestHash);
    if (decision.kind === 'replay') this.remember(reservation.idempotencyKey!, stored, reservation.nowMs);
    return decision;
  }

  /** Re-read a stale balance; flags changed in the meantime (a newer generation) are not overwritten. */
  private refresh(orgId: string, generation: number | undefined): void {
    loadSnapshot(this.services, orgId)
      .then((s) => this.spend.hydrate({ ...s, generation, nowMs: this.clock.now().getTime() }))
      .catch((err: unknown) => this.log.warn({ err, org_id: orgId }, 'balance refresh failed'));
  }
}
