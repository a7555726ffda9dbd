// The rate tokens of calls on an org's shared lease (issue 32, core/spend/rate-tokens.ts) over a real Redis: a key's
// tokens come from its minute's window, at most half of what is left each time; under 32 calls of room the key is
// admitted call by call, where the limit's 429 is decided; the tokens of one minute are never spent in the next.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisCounterStore } from '../../../core/counters/index.js';
import { createLogger } from '../../../core/logger.js';
import { RateTokens } from '../../../core/spend/rate-tokens.js';
import { RedisSpendStore } from '../../../core/spend/redis-spend-store.js';
import type { AdmitInput } from '../../../core/spend/spend-store.js';
import { REDIS_URL } from '../../helpers/env.js';
import { testRedisPrefix } from '../../helpers/services.js';

const logger = createLogger({ level: 'silent' });
const DAY = '2026-11-22';
const NOW = Date.UTC(2026, 10, 22, 12, 0, 5);

describe('rate tokens for the shared lease (issue 32)', () => {
  let counters: RedisCounterStore;
  let store: RedisSpendStore;
  beforeAll(async () => {
    counters = new RedisCounterStore({ url: REDIS_URL, keyPrefix: testRedisPrefix(), logger });
    await counters.connect();
    store = new RedisSpendStore(counters.client);
  });
  afterAll(() => counters.close());

  let n = 0;
  async function key(hydrated = true) {
    const id = `${++n}_${Date.now()}`;
    const orgId = `org_rt${id}`;
    const keyId = `key_rt${id}`;
    await store.hydrate({
      orgId,
      keyId,
      day: DAY,
      org: { creditCents: 1_000, balanceVersion: 1, billingMode: 'prepaid', suspended: false, creditLimitCents: 0 },
      ...(hydrated ? { key: { spentCents: 0, daySpentCents: 0 } } : {}),
      nowMs: NOW,
    });
    const input = {
      orgId,
      keyId,
      rateKey: `rk_${id}`,
      ratePerMin: 100,
      day: DAY,
      priceCents: 1,
      perCallMaxCents: null,
      budgetCents: null,
      dailyCapCents: null,
      ancestors: [],
      nowMs: NOW,
      holdTtlMs: 40_000,
      staleAfterMs: 3_600_000,
    };
    return input;
  }
  const admitOf = (input: Awaited<ReturnType<typeof key>>, i: number): AdmitInput => ({
    ...input,
    idempotencyKey: null,
    requestHash: '',
    reservationId: `use_rt_${input.keyId}_${i}`,
    reservationTtlMs: 40_000,
  });

  it('takes half the room each time, then call by call: 100 a minute, never more', async () => {
    const input = await key();
    const tokens = new RateTokens(store);
    expect(tokens.available(input.rateKey, NOW)).toBe(0);
    expect(await tokens.acquire(input, 'lease_rt1')).toMatchObject({ outcome: 'lease', tokens: 50, cents: 0 });
    let spent = 0;
    while (tokens.available(input.rateKey, NOW) > 0) {
      tokens.take(input.rateKey);
      spent += 1;
    }
    expect(spent).toBe(50);
    expect(await tokens.acquire(input, 'lease_rt2')).toMatchObject({ outcome: 'lease', tokens: 25 });
    expect(tokens.available(input.rateKey, NOW)).toBe(25);
    for (let i = 0; i < 25; i++) tokens.take(input.rateKey);
    // 25 calls of room left: under 32, the key's calls are admitted one by one, and the 26th is refused.
    expect(await tokens.acquire(input, 'lease_rt3')).toEqual({ outcome: 'exact' });
    expect(tokens.exact(input.rateKey)).toBe(true);
    for (let i = 0; i < 25; i++) expect((await store.admit(admitOf(input, i))).outcome).toBe('admitted');
    expect((await store.admit(admitOf(input, 25))).outcome).toBe('rate_limited');
  });

  it('gives unused tokens back to the window (idle keys, shutdown)', async () => {
    const input = await key();
    const tokens = new RateTokens(store, undefined, () => NOW);
    expect(await tokens.acquire(input, 'lease_rt7')).toMatchObject({ outcome: 'lease', tokens: 50 });
    for (let i = 0; i < 10; i++) tokens.take(input.rateKey);
    tokens.returnIdle(); // used just now: kept
    expect(tokens.available(input.rateKey, NOW)).toBe(40);
    tokens.close(); // shutdown: the 40 unused go back, 10 used stay counted
    expect(tokens.available(input.rateKey, NOW)).toBe(0);
    expect(await new RateTokens(store).acquire(input, 'lease_rt8')).toMatchObject({ outcome: 'lease', tokens: 45 });
  });

  it("a minute's tokens are not spent in the next, and a key the fast state does not hold is hydrated first", async () => {
    const input = await key();
    const tokens = new RateTokens(store);
    expect(await tokens.acquire(input, 'lease_rt4')).toMatchObject({ outcome: 'lease', tokens: 50 });
    expect(tokens.available(input.rateKey, NOW + 60_000)).toBe(0);
    // The next minute's window is a new one on the fast state: half of its 100 again.
    expect(await tokens.acquire({ ...input, nowMs: NOW + 60_000 }, 'lease_rt5')).toMatchObject({ tokens: 50 });
    expect(tokens.available(input.rateKey, NOW + 60_000)).toBe(50);

    const cold = await key(false);
    expect(await new RateTokens(store).acquire(cold, 'lease_rt6')).toMatchObject({ outcome: 'hydrate' });
  });
});
