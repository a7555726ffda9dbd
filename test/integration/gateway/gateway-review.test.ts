// Issue 10's gateway fixes, each against real Postgres, Redis and a recording loopback upstream: no path leaves its
// endpoint (traversal forms refused before any spend), Postgres answers replays when Redis has forgotten, an ambiguous
// commit is fenced (never a 503 for a charged call, never a void of spent money), a card-billed org is bounded by its
// credit limit, and a blocked upstream is reported without naming the network.
import { request as httpRequest } from 'node:http';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../../api/app.js';
import { ManualClock } from '../../../core/clock.js';
import type { RedisCounterStore } from '../../../core/counters/index.js';
import { UsageCommitter, type CallRecord } from '../../../core/spend/usage-committer.js';
import { createGatewayHandler, type GatewayHandler } from '../../../gateway/app.js';
import { unsafePathReason } from '../../../gateway/upstream-path.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { newId } from '../../../core/ids.js';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { sql } from '../../helpers/db.js';
import { describe as show, expectFailure, http, serve } from '../../helpers/http.js';
import { createLiveApi, type LiveApi } from '../../helpers/listings.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';
import { idempotencyRecordKey, RedisSpendStore } from '../../../core/spend/redis-spend-store.js';
import { waitFor } from '../../helpers/ports.js';

/** A request sent with its path exactly as written (fetch would resolve dot segments before sending). */
function rawRequest(
  baseUrl: string,
  path: string,
  token: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any }> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path,
        method: 'GET',
        headers: { authorization: `Bearer ${token}`, ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // keep the text
          }
          resolve({ status: res.statusCode ?? 0, body });
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('gateway review fixes (issue 10)', () => {
  let stack: TestStack;
  let gateway: GatewayHandler;
  let server: RunningHttpServer;
  let upstream: Upstream;
  let provider: Person;
  let api: LiveApi;
  const clock = new ManualClock(new Date('2026-11-23T12:00:00Z'));

  beforeAll(async () => {
    upstream = await startUpstream();
    stack = await createTestStack({
      clock,
      env: { GATEWAY_RATE_LIMIT_PER_MIN: '100000', CARD_CREDIT_LIMIT_CENTS: '12', GATEWAY_DRAIN_CLAIM_IDLE_MS: '200' },
    });
    gateway = createGatewayHandler(stack.services);
    server = await serve(gateway);
    provider = await createPerson(stack.services);
    api = await createLiveApi(stack.services, {
      providerOrgId: provider.orgId,
      baseUrl: `${upstream.url}/api/v2`,
      credential: { secret: 'provider-secret', injection: 'header', name: 'X-Api-Key' },
      endpoints: [
        { method: 'GET', path: '/items/{id}', priceCents: 1 },
        { method: 'GET', path: '/items/{id}/parts/{part}', priceCents: 1 },
        { method: 'POST', path: '/orders', priceCents: 5 },
      ],
    });
  });
  afterAll(async () => {
    await stack?.services.earnings.foldAll();
    const report = await stack?.services.reconciliation.run();
    expect(report?.ok, JSON.stringify(report)).toBe(true);
    await server?.close();
    await gateway?.close();
    await stack?.close();
    await upstream?.close();
  });

  async function consumer(credit: number): Promise<Person> {
    const p = await createPerson(stack.services);
    if (credit > 0) await stack.services.ledger.post({ orgId: p.orgId, kind: 'grant', amountCents: credit });
    return p;
  }
  // The calls answered so far are in Postgres first (the usage drain: docs/durability.md).
  const balance = async (orgId: string) => {
    await gateway.drain.flush();
    const [row] = await sql<{ credit_cents: string }>(stack.db.url, 'select credit_cents from orgs where id = $1', [
      orgId,
    ]);
    return Number(row!.credit_cents);
  };
  /** The paid calls charged: the calls of the org's usage batches, whose debits add up to what the batches charged. */
  const debits = async (orgId: string) => {
    await gateway.drain.flush();
    const [row] = await sql<{ calls: number; charged: number; debited: number }>(
      stack.db.url,
      `select coalesce(sum(calls), 0)::int as calls, coalesce(sum(charged_cents), 0)::int as charged,
              (select coalesce(-sum(amount_cents), 0)::int from ledger_entries where org_id = $1 and kind = 'usage')
                as debited
         from usage_batches where org_id = $1`,
      [orgId],
    );
    expect(row!.debited).toBe(row!.charged);
    return row!.calls;
  };

  describe('path traversal through templated endpoints', () => {
    const ATTACKS = [
      '/items/..',
      '/items/.',
      '/items/../../admin',
      '/items/%2e%2e',
      '/items/%2E%2e',
      '/items/%2e',
      '/items/.%2E',
      '/items/%252e%252e',
      '/items/%25252E%25252E',
      '/items/..%2f..%2fadmin',
      '/items/..%2F..%2Fadmin',
      '/items/%2e%2e%2fadmin',
      '/items/a%2fb',
      '/items/a%252Fb',
      '/items/..\\..\\admin',
      '/items/x\\..\\..\\admin',
      '/items/%5c..%5cadmin',
      '/items/%5C',
      '/items/%255c',
      '/items/1/parts/..',
      '/items/1/parts/%2e%2e%2f%2e%2e%2fadmin',
      '/items/%2e%2e/parts/x',
    ];

    it.each(ATTACKS)('refuses %s with 400 before any spend or upstream call', async (attack) => {
      const c = await consumer(10);
      const seenBefore = upstream.seen.length;
      const res = await rawRequest(server.url, `/v1/proxy/${api.slug}${attack}`, c.apiKey);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body).toMatchObject({ ok: false, error: { code: 'validation_failed' } });
      expect(upstream.seen.length).toBe(seenBefore);
      expect(await balance(c.orgId)).toBe(10);
      expect(await debits(c.orgId)).toBe(0);
    });

    it('still serves ordinary and encoded-but-harmless parameters, at exactly the template expansion', async () => {
      const c = await consumer(10);
      const seenBefore = upstream.seen.length;
      for (const id of ['42', 'a.b', '..a', 'v1.2.3', 'caf%C3%A9', '%2e%2e%2e', 'x%20y']) {
        const res = await rawRequest(server.url, `/v1/proxy/${api.slug}/items/${id}?q=..%2f`, c.apiKey);
        expect(res.status, `${id}: ${JSON.stringify(res.body)}`).toBe(200);
      }
      const paths = upstream.seen.slice(seenBefore).map((s) => s.url);
      expect(paths).toEqual([
        '/api/v2/items/42?q=..%2f',
        '/api/v2/items/a.b?q=..%2f',
        '/api/v2/items/..a?q=..%2f',
        '/api/v2/items/v1.2.3?q=..%2f',
        '/api/v2/items/caf%C3%A9?q=..%2f',
        '/api/v2/items/%2e%2e%2e?q=..%2f',
        '/api/v2/items/x%20y?q=..%2f',
      ]);
      // Every request the upstream ever saw in this file stayed under the listing's templates.
      expect(upstream.seen.every((s) => /^\/api\/v2\/(items\/[^/]+(\/parts\/[^/]+)?|orders)(\?|$)/.test(s.url))).toBe(
        true,
      );
    });

    it('the rule itself: dot segments, separators and backslashes, however often encoded', () => {
      expect(unsafePathReason('/items/42')).toBeUndefined();
      expect(unsafePathReason('/items/%2e%2e%2e')).toBeUndefined();
      expect(unsafePathReason('/items/%252525252e')).toMatch(/too many/);
      expect(unsafePathReason('/a/%2e%2E')).toMatch(/dot segment/);
      expect(unsafePathReason('/a/%2f')).toMatch(/encoded/);
      expect(unsafePathReason('/a\\b')).toMatch(/backslash/);
    });
  });

  describe('idempotency survives Redis', () => {
    const redisKeys = async () => {
      const redis = (stack.services.counters as RedisCounterStore).client;
      const prefix = stack.config.counters.keyPrefix;
      return { redis, prefix, keys: (await redis.keys(`${prefix}sp:*`)).map((k) => k.slice(prefix.length)) };
    };

    it('after the fast state is flushed: the same key replays from Postgres, one upstream call, one debit', async () => {
      const c = await consumer(100);
      const seenBefore = upstream.seen.length;
      const first = await http(server.url, 'POST', `/v1/proxy/${api.slug}/orders`, {
        token: c.apiKey,
        body: { n: 1 },
        headers: { 'idempotency-key': 'order-1' },
      });
      expect(first.status, show(first)).toBe(200);
      await new Promise((r) => setTimeout(r, 50)); // let the settle land, then lose it all
      const { redis, keys } = await redisKeys();
      await redis.del(...keys);

      const again = await http(server.url, 'POST', `/v1/proxy/${api.slug}/orders`, {
        token: c.apiKey,
        body: { n: 1 },
        headers: { 'idempotency-key': 'order-1' },
      });
      expect(again.status, show(again)).toBe(200);
      expect(again.body.data).toBeNull();
      expect(again.body.meta).toMatchObject({
        replayed: true,
        original_request_id: first.body.meta.request_id,
        cost_cents: 5,
        credit_applied_cents: 5,
        billable_cents: 0,
      });
      // Another request under the same key is still refused.
      const other = await http(server.url, 'POST', `/v1/proxy/${api.slug}/orders`, {
        token: c.apiKey,
        body: { n: 2 },
        headers: { 'idempotency-key': 'order-1' },
      });
      expectFailure(other, 422, 'idempotency_key_reused');
      expect(upstream.seen.length - seenBefore).toBe(1);
      expect(await debits(c.orgId)).toBe(1);
      expect(await balance(c.orgId)).toBe(95);
    });

    it('after a lost settle (the record never written) and 24 h later: still one upstream call, one debit', async () => {
      const c = await consumer(100);
      const seenBefore = upstream.seen.length;
      const send = () =>
        http(server.url, 'POST', `/v1/proxy/${api.slug}/orders`, {
          token: c.apiKey,
          body: { n: 3 },
          headers: { 'idempotency-key': 'order-lost-settle' },
        });
      const first = await send();
      expect(first.status, show(first)).toBe(200);
      await new Promise((r) => setTimeout(r, 50));
      // The settle's record is gone (as if the settle never ran and the claim expired).
      const { redis } = await redisKeys();
      await redis.del(idempotencyRecordKey(`${c.orgId}:${c.keyId}:order-lost-settle`));
      const second = await send();
      expect(second.body.meta, show(second)).toMatchObject({ replayed: true });

      clock.advance(24 * 3_600_000 + 60_000);
      const { keys } = await redisKeys();
      await redis.del(...keys);
      const later = await send();
      expect(later.status, show(later)).toBe(200);
      expect(later.body.meta).toMatchObject({ replayed: true, original_request_id: first.body.meta.request_id });
      expect(upstream.seen.length - seenBefore).toBe(1);
      expect(await debits(c.orgId)).toBe(1);
      expect(await balance(c.orgId)).toBe(95);
    });

    it('the commit itself refuses a second booking under one key (the unique backstop)', async () => {
      const c = await consumer(100);
      const committer = new UsageCommitter({
        orm: stack.services.orm,
        logger: stack.services.logger,
        feePercent: 20,
        prepared: true,
      });
      const call = (usageId: string): CallRecord => ({
        usageId,
        orgId: c.orgId,
        keyId: c.keyId,
        apiId: api.apiId,
        apiSlug: api.slug,
        endpointId: api.endpoints['POST /orders']!,
        providerOrgId: provider.orgId,
        method: 'POST',
        path: '/orders',
        status: 200,
        outcome: 'success',
        priceCents: 5,
        priceCentsEffective: 5,
        latencyMs: 1,
        idempotencyKey: 'dup-key',
        requestHash: 'h'.repeat(32),
        requestId: newId('request'),
        day: '2026-11-23',
        at: clock.now(),
      });
      // Two in one batch, then a third in a later batch.
      const [a, b] = await Promise.all([
        committer.commit(call(newId('usage'))),
        committer.commit(call(newId('usage'))),
      ]);
      expect([a.duplicate, b.duplicate].sort()).toEqual([false, true]);
      expect((await committer.commit(call(newId('usage')))).duplicate).toBe(true);
      expect(await debits(c.orgId)).toBe(1);
      expect(await balance(c.orgId)).toBe(95);
      await committer.flush();
    });
  });

  describe('ambiguous settle outcome', () => {
    it('a settle whose answer is lost: the call is booked in Postgres and answered 200, charged once', async () => {
      const c = await consumer(20);
      // eslint-disable-next-line @typescript-eslint/unbound-method -- restored below; called with its own this
      const original = RedisSpendStore.prototype.settleBatch;
      RedisSpendStore.prototype.settleBatch = async function (this: RedisSpendStore, input) {
        await original.call(this, input);
        throw new Error('connection lost after the script ran');
      };
      const headers = { 'Idempotency-Key': 'lost-answer' };
      let res;
      try {
        res = await http(server.url, 'POST', `/v1/proxy/${api.slug}/orders`, { token: c.apiKey, body: {}, headers });
      } finally {
        RedisSpendStore.prototype.settleBatch = original;
      }
      expect(res.status, show(res)).toBe(200);
      expect(res.body.meta).toMatchObject({ cost_cents: 5, credit_applied_cents: 5, billable_cents: 0 });
      // Booked before the answer: the debit is in Postgres already.
      const [row] = await sql<{ n: string }>(
        stack.db.url,
        "select count(*) as n from ledger_entries where org_id = $1 and kind = 'usage'",
        [c.orgId],
      );
      expect(Number(row!.n)).toBe(1);
      const again = await http(server.url, 'POST', `/v1/proxy/${api.slug}/orders`, {
        token: c.apiKey,
        body: {},
        headers,
      });
      expect(again.status, show(again)).toBe(200);
      expect(again.body.meta).toMatchObject({ replayed: true, cost_cents: 5 });
      // The settle's stream entry was delivered to this process but never handed to its drain: a claim books it,
      // as a duplicate of the call already in Postgres.
      await waitFor(
        async () => {
          await gateway.drain.claimOnce();
          return (await stack.services.spend.pendingUsage(c.orgId)) === 0 ? true : undefined;
        },
        { timeoutMs: 15_000 },
      );
      expect(await debits(c.orgId)).toBe(1);
      expect(await balance(c.orgId)).toBe(15);
    });

    it('a settle that never ran (the fast state failed first): booked in Postgres, answered 200, the hold released', async () => {
      const c = await consumer(5);
      // eslint-disable-next-line @typescript-eslint/unbound-method -- restored below
      const original = RedisSpendStore.prototype.settleBatch;
      RedisSpendStore.prototype.settleBatch = function () {
        return Promise.reject(new Error('connection refused'));
      };
      let res;
      try {
        res = await http(server.url, 'POST', `/v1/proxy/${api.slug}/orders`, { token: c.apiKey, body: {} });
      } finally {
        RedisSpendStore.prototype.settleBatch = original;
      }
      expect(res.status, show(res)).toBe(200);
      expect(await balance(c.orgId)).toBe(0);
      // The hold is gone and the org is re-read from Postgres: nothing left to spend, and nothing for the sweeper.
      const next = await http(server.url, 'POST', `/v1/proxy/${api.slug}/orders`, { token: c.apiKey, body: {} });
      expectFailure(next, 402, 'payment_required');
      clock.advance(60_000);
      expect(await gateway.sweeper.sweepOnce()).toEqual({ voided: 0 });
      expect(await debits(c.orgId)).toBe(1);
    });

    it('a settle whose outcome is unknown while Postgres also refuses the booking: 503, not charged', async () => {
      const c = await consumer(5);
      // eslint-disable-next-line @typescript-eslint/unbound-method -- restored below
      const original = RedisSpendStore.prototype.settleBatch;
      // eslint-disable-next-line @typescript-eslint/unbound-method -- restored below
      const commit = UsageCommitter.prototype.commit;
      RedisSpendStore.prototype.settleBatch = () => Promise.reject(new Error('connection refused'));
      UsageCommitter.prototype.commit = () => Promise.reject(new Error('database down'));
      let res;
      try {
        res = await http(server.url, 'POST', `/v1/proxy/${api.slug}/orders`, { token: c.apiKey, body: {} });
      } finally {
        RedisSpendStore.prototype.settleBatch = original;
        UsageCommitter.prototype.commit = commit;
      }
      expectFailure(res, 503, 'internal_error');
      expect(await balance(c.orgId)).toBe(5);
      // Held until the reservation expires, then voided: the 5 cents can be spent again.
      clock.advance(60_000);
      expect(await gateway.sweeper.sweepOnce()).toEqual({ voided: 1 });
      const next = await http(server.url, 'POST', `/v1/proxy/${api.slug}/orders`, { token: c.apiKey, body: {} });
      expect(next.status, show(next)).toBe(200);
      expect(await balance(c.orgId)).toBe(0);
    });
  });

  it('a card-billed org is refused past its credit limit (402 payment_required), per org or by default', async () => {
    const c = await consumer(0);
    await sql(stack.db.url, "update orgs set billing_mode = 'card' where id = $1", [c.orgId]);
    await stack.services.spend.forgetOrg(c.orgId);
    const order = () => http(server.url, 'POST', `/v1/proxy/${api.slug}/orders`, { token: c.apiKey, body: {} });
    expect((await order()).status).toBe(200);
    expect((await order()).status).toBe(200);
    const refused = await order(); // 10 owed; 15 would pass CARD_CREDIT_LIMIT_CENTS=12
    expectFailure(refused, 402, 'payment_required');
    expect(refused.body.error.details).toMatchObject({ reason: 'credit_limit_reached' });
    expect(await balance(c.orgId)).toBe(-10);
    // An operator's per-org limit replaces the default.
    await sql(stack.db.url, 'update orgs set credit_limit_cents = 1000 where id = $1', [c.orgId]);
    await stack.services.spend.forgetOrg(c.orgId);
    expect((await order()).status).toBe(200);
    expect(await balance(c.orgId)).toBe(-15);
  });

  it("a paid call never waits for the provider's org row: earnings are queued, then folded off the hot path", async () => {
    const c = await consumer(10);
    // Another transaction holds the provider's org row (a payout, an operator) for the whole call and its booking.
    const holder = new pg.Client({ connectionString: stack.db.url });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('select id from orgs where id = $1 for update', [provider.orgId]);
      const res = await http(server.url, 'POST', `/v1/proxy/${api.slug}/orders`, { token: c.apiKey, body: {} });
      expect(res.status, show(res)).toBe(200);
      let timer: NodeJS.Timeout | undefined;
      const booked = await Promise.race([
        gateway.drain.flush().then(() => true),
        new Promise<false>((r) => (timer = setTimeout(() => r(false), 5_000))),
      ]);
      clearTimeout(timer);
      expect(booked, 'the booking waited for the lock on the provider').toBe(true);
      const [queued] = await sql<{ gross_cents: string }>(
        stack.db.url,
        'select gross_cents from earning_accruals where consumer_org_id = $1',
        [c.orgId],
      );
      expect(queued).toEqual({ gross_cents: '5' });
    } finally {
      await holder.query('rollback');
      await holder.end();
    }
    expect(await debits(c.orgId)).toBe(1);
  });

  it("a child key's spend counts against its parent's budget too (minted by the key, over the real routes)", async () => {
    const c = await consumer(100);
    const apiApp = await serve(createApiApp(stack.services).callback());
    try {
      const mint = (token: string, body: Record<string, unknown>) =>
        http(apiApp.url, 'POST', '/v1/keys', { token, body: { name: 'k', ...body } });
      const parent = await mint(c.session, { scopes: ['proxy:call', 'keys:write'], budget_cents: 12 });
      expect(parent.status, show(parent)).toBe(201);
      const child = await mint(parent.body.data.api_key as string, { scopes: ['proxy:call'] });
      expect(child.status, show(child)).toBe(201);
      const order = (token: string) => http(server.url, 'POST', `/v1/proxy/${api.slug}/orders`, { token, body: {} });
      expect((await order(child.body.data.api_key as string)).status).toBe(200);
      expect((await order(parent.body.data.api_key as string)).status).toBe(200);
      // 10 of the parent's 12 are spent (5 by the child): neither may spend 5 more.
      const refused = await order(child.body.data.api_key as string);
      expectFailure(refused, 402, 'insufficient_budget');
      expect(refused.body.error.details).toMatchObject({ key_id: parent.body.data.id });
      expectFailure(await order(parent.body.data.api_key as string), 402, 'insufficient_budget');
      await gateway.drain.flush();
      const [row] = await sql(stack.db.url, 'select spent_cents from api_keys where id = $1', [parent.body.data.id]);
      expect(row).toEqual({ spent_cents: '10' });
    } finally {
      await apiApp.close();
    }
  });

  it('activating a required document reaches the gateway at once: the next call gets 428', async () => {
    const c = await consumer(10);
    const seller = await createPerson(stack.services);
    const listing = await createLiveApi(stack.services, {
      providerOrgId: seller.orgId,
      baseUrl: `${upstream.url}/api/v2`,
      endpoints: [{ method: 'GET', path: '/items/{id}', priceCents: 0 }],
    });
    const get = () => http(server.url, 'GET', `/v1/proxy/${listing.slug}/items/1`, { token: c.apiKey });
    expect((await get()).status).toBe(200); // the listing is now cached by the gateway
    const apiApp = await serve(createApiApp(stack.services).callback());
    try {
      const doc = await http(apiApp.url, 'POST', '/v1/provider/documents', {
        token: seller.session,
        body: { kind: 'terms', version: '1', body: '# Terms', api_id: listing.apiId, acceptance_mode: 'required' },
      });
      expect(doc.status, show(doc)).toBe(201);
      const activated = await http(apiApp.url, 'POST', `/v1/provider/documents/${doc.body.data.document_id}/activate`, {
        token: seller.session,
      });
      expect(activated.status, show(activated)).toBe(200);
    } finally {
      await apiApp.close();
    }
    const started = Date.now();
    await expect.poll(async () => (await get()).status, { timeout: 1_000, interval: 50 }).toBe(428);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('a provider host on a non-public address: 502 upstream_error that does not describe the network', async () => {
    const c = await consumer(10);
    const hidden = await createLiveApi(stack.services, {
      providerOrgId: provider.orgId,
      baseUrl: 'http://10.255.255.1:9',
      endpoints: [{ method: 'GET', path: '/x', priceCents: 1 }],
    });
    const res = await http(server.url, 'GET', `/v1/proxy/${hidden.slug}/x`, { token: c.apiKey });
    expectFailure(res, 502, 'upstream_error');
    expect(res.text).not.toMatch(/non-public|private|10\.255|blocked/i);
    expect(await balance(c.orgId)).toBe(10);
  });
});
