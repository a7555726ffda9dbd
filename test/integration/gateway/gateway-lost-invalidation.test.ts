// A lost invalidation message (issue 21, item 12): a gateway process whose pub/sub subscriber is cut (an ACL that
// forbids every channel: Redis disconnects the subscriber and refuses its resubscription, and the control plane's
// PUBLISH fails) still refuses, within 1 s, a key revoked, an org suspended and a budget tightened by the control
// plane (this test process), because its admission reads the org's key version and fast state from Redis.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Org } from '../../../db/entities/index.js';
import type { Person } from '../../helpers/accounts.js';
import { startDurableRedis, type DurableRedis } from '../../helpers/durable-redis.js';
import { http } from '../../helpers/http.js';
import type { LiveApi } from '../../helpers/listings.js';
import { stackRoleEnv, startProcess, type RunningProcess } from '../../helpers/processes.js';
import { startListedStack } from '../../helpers/listed-stack.js';
import type { TestStack } from '../../helpers/services.js';
import type { Upstream } from '../../helpers/upstream.js';
import { createConsumer } from '../../helpers/fixtures.js';

describe('a lost invalidation message', () => {
  let redis: DurableRedis;
  let admin: Redis;
  let stack: TestStack;
  let upstream: Upstream;
  let api: LiveApi;
  let gw: RunningProcess;

  beforeAll(async () => {
    redis = await startDurableRedis(['--appendonly', 'no']);
    admin = new Redis(redis.url);
    ({ stack, upstream, api } = await startListedStack({
      env: { REDIS_URL: redis.url },
      endpoints: [
        { method: 'GET', path: '/paid', priceCents: 2 },
        { method: 'GET', path: '/free', priceCents: 0 },
      ],
    }));
    gw = await startProcess({ roles: ['gateway'], env: stackRoleEnv(stack, { SHUTDOWN_GRACE_MS: '2000' }) });
  }, 120_000);
  afterAll(async () => {
    if (stack) expect(await stack.services.ledger.findDrift()).toEqual([]);
    await gw?.stop('SIGKILL');
    await stack?.close();
    await upstream?.close();
    admin?.disconnect();
    await redis?.stop();
  });

  async function consumer(): Promise<Person> {
    const c = await createConsumer(stack.services, 100);
    return c;
  }
  const call = (c: Person, path = 'paid') =>
    http(gw.urls.gateway, 'GET', `/v1/proxy/${api.slug}/${path}`, { token: c.apiKey });

  /** Answers within 1 s of `since` (the change's commit), polled every 50 ms. */
  async function statusWithin1s(c: Person, path: string, expected: number): Promise<void> {
    const since = Date.now();
    let status = 0;
    while (Date.now() - since < 1_000) {
      status = (await call(c, path)).status;
      if (status === expected) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(status, `${path}: still ${status} 1 s after the change`).toBe(expected);
  }

  it('revocation, suspension and a tightened budget reach the gateway with its subscriber cut', async () => {
    const [revoked, suspended, capped] = [await consumer(), await consumer(), await consumer()];
    // Warm the gateway's caches (key, org fast state) on both paths.
    for (const c of [revoked, suspended, capped]) {
      expect((await call(c)).status).toBe(200);
      expect((await call(c, 'free')).status).toBe(200);
    }

    // Cut pub/sub: no channel allowed for anyone. Redis drops the gateway's subscriber and refuses it again.
    await admin.call('ACL', 'SETUSER', 'default', 'resetchannels');
    await expect.poll(async () => (await admin.call('CLIENT', 'LIST', 'TYPE', 'pubsub')) as string).toBe('');

    const sessionOf = (c: Person) =>
      stack.services.authenticator.authenticate({ authorization: `Bearer ${c.session}` });
    await stack.services.keyAdmin.revoke(await sessionOf(revoked), revoked.keyId);
    await statusWithin1s(revoked, 'paid', 401);
    await statusWithin1s(revoked, 'free', 401);

    const em = stack.services.orm.em.fork();
    const org = await em.findOneOrFail(Org, suspended.orgId);
    org.suspended = true;
    await em.flush();
    await stack.services.gatewayEvents.orgChanged(suspended.orgId);
    await statusWithin1s(suspended, 'paid', 402);
    await statusWithin1s(suspended, 'free', 402);

    // 2 cents spent: a budget of 3 leaves room for no 2-cent call.
    await stack.services.keyAdmin.patch(await sessionOf(capped), capped.keyId, { budget_cents: 3 });
    await statusWithin1s(capped, 'paid', 402);
    expect((await call(capped, 'free')).status).toBe(200);

    // Nothing reached the gateway over pub/sub meanwhile.
    expect(await admin.call('CLIENT', 'LIST', 'TYPE', 'pubsub')).toBe('');
    await admin.call('ACL', 'SETUSER', 'default', 'allchannels');
  }, 60_000);
});
