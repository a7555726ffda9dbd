/**
 * Rate tokens for the calls of an org's shared lease (issue 32, "flat at scale"; docs/durability.md, "Leases").
 *
 * A key without governance of its own (no budget, daily cap, per-call maximum or ancestor) has nothing on the fast
 * state to hold its calls against but its org's money, so its paid calls share one lease per org (LeaseBook's shared
 * slot): a thousand such keys of ten orgs take ten leases a second, not a thousand call-by-call admissions. What stays
 * per key is the request rate (spec: about 300 calls a minute per key prefix): this book takes a key's tokens from its
 * minute's window on the fast state in one `tokens` lease (at most half of what the window has left, as a key's own
 * lease does), and spends them in process until that minute ends. Tokens carry no authority: the shared lease they are
 * spent with admits for 1 s at most and checks the org's key version, so a revoked or newly capped key stops within
 * 1 s as before. Unused tokens are not given back: the window they were taken from ends with them. A window with under
 * `MIN_CALLS` calls of room answers `exact`, and the key's calls are admitted one by one (the rate limit's 429 is
 * decided there, exactly as without leases). Tokens a key leaves unused for `IDLE_MS` (its calls stopped, or go to
 * another process) are given back to the window, as a lease's are when it closes, and so are all at shutdown.
 */
import type { Logger } from '../logger.js';
import type { LeaseGrant, LeaseInput, LeaseRef, SpendStore } from './spend-store.js';
import { MIN_CALLS } from './leases.js';

const MINUTE_MS = 60_000;
/** After an `exact` answer, the key's calls are admitted one by one for this long before tokens are asked for again. */
const EXACT_HOLD_MS = 1_000;
/** Windows kept at most (past minutes' are dropped first; then the oldest). */
const MAX_WINDOWS = 100_000;
/** Tokens unused this long go back to their window. */
export const IDLE_MS = 2_000;

interface Window {
  /** The minute (ms since the epoch / 60,000) the tokens belong to. */
  minute: number;
  tokens: number;
  acquiring: Promise<LeaseGrant> | null;
  /** performance.now() until which the key is admitted call by call. */
  exactUntil: number;
  /** performance.now() of the last token taken (or granted). */
  usedAt: number;
  /** Where the tokens came from (to give unused ones back); null until a grant. */
  ref: LeaseRef | null;
}

export class RateTokens {
  private readonly windows = new Map<string, Window>();
  private sweeper: NodeJS.Timeout | null = null;

  constructor(
    private readonly spend: Required<Pick<SpendStore, 'lease' | 'returnLease'>>,
    private readonly log?: Logger,
    /** The gateway's clock (ms): which minute's window is current. */
    private readonly now: () => number = Date.now,
  ) {}

  /** Tokens this process holds for the key prefix in the minute of `nowMs`. */
  available(rateKey: string, nowMs: number): number {
    const w = this.windows.get(rateKey);
    return w !== undefined && w.minute === Math.floor(nowMs / MINUTE_MS) ? w.tokens : 0;
  }

  /** Spend one token (the caller saw `available` > 0 in the same turn). */
  take(rateKey: string): void {
    const w = this.windows.get(rateKey);
    if (w !== undefined && w.tokens > 0) {
      w.tokens -= 1;
      w.usedAt = performance.now();
    }
  }

  /** The key's calls are admitted one by one for now (the store answered `exact` within the last second). */
  exact(rateKey: string): boolean {
    const w = this.windows.get(rateKey);
    return w !== undefined && performance.now() < w.exactUntil;
  }

  /**
   * Ask the store for the key's tokens in the minute of `input.nowMs` (one request at a time per key prefix: concurrent
   * callers share its answer). `hydrate` and `stale_key` are the caller's to handle, as for a lease.
   */
  acquire(
    input: Omit<LeaseInput, 'leaseId' | 'wantCents' | 'wantTokens' | 'minCalls' | 'kind'>,
    leaseId: string,
  ): Promise<LeaseGrant> {
    const minute = Math.floor(input.nowMs / MINUTE_MS);
    let w = this.windows.get(input.rateKey);
    if (w === undefined || (w.minute !== minute && w.acquiring === null)) {
      if (w === undefined) this.bound(minute);
      w = { minute, tokens: 0, acquiring: null, exactUntil: w?.exactUntil ?? 0, usedAt: 0, ref: null };
      this.windows.set(input.rateKey, w);
    }
    if (w.acquiring) return w.acquiring;
    const window = w;
    const asked = this.spend
      .lease({
        ...input,
        priceCents: 0,
        leaseId,
        wantCents: 0,
        wantTokens: input.ratePerMin,
        minCalls: MIN_CALLS,
        kind: 'tokens',
      })
      .then((grant) => {
        if (grant.outcome === 'lease') {
          window.tokens += grant.tokens;
          window.usedAt = performance.now();
          window.ref = {
            leaseId,
            orgId: input.orgId,
            keyId: input.keyId,
            day: input.day,
            ancestorKeyIds: [],
            rateWindow: grant.rateWindow,
          };
          this.sweeper ??= setInterval(() => this.returnIdle(), IDLE_MS / 2).unref();
        }
        if (grant.outcome === 'exact') window.exactUntil = performance.now() + EXACT_HOLD_MS;
        return grant;
      })
      .finally(() => {
        window.acquiring = null;
      });
    window.acquiring = asked;
    return asked;
  }

  /** Give back the tokens of keys idle for `IDLE_MS` (all with `all`: shutdown); past minutes' windows are gone. */
  returnIdle(all = false): void {
    const now = performance.now();
    const minute = Math.floor(this.now() / MINUTE_MS);
    for (const [rateKey, w] of this.windows) {
      if (w.acquiring !== null) continue;
      if (w.minute < minute - 1 && now >= w.exactUntil) {
        this.windows.delete(rateKey);
        continue;
      }
      if (w.tokens === 0 || w.ref === null || (!all && now - w.usedAt < IDLE_MS)) continue;
      const unused = w.tokens;
      w.tokens = 0;
      // A lease that holds no money (its hash never existed): the return gives the tokens back and nothing else.
      this.spend.returnLease(w.ref, 0, unused).catch((err: unknown) => {
        this.log?.warn({ err }, 'rate tokens return failed; the window ends with them');
      });
    }
  }

  /** Shutdown: every unused token back, no more sweeps. */
  close(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
    this.returnIdle(true);
  }

  /** Keep the book bounded: past minutes' windows go first, then the oldest. */
  private bound(minute: number): void {
    if (this.windows.size < MAX_WINDOWS) return;
    for (const [key, w] of this.windows) if (w.minute < minute && w.acquiring === null) this.windows.delete(key);
    while (this.windows.size >= MAX_WINDOWS) {
      const oldest = this.windows.keys().next();
      if (oldest.done) break;
      this.windows.delete(oldest.value);
    }
  }
}
