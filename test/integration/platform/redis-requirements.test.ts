// The money path refuses a Redis that breaks docs/durability.md's settings (issue 21, items 10 and 11), with real
// processes and real redis-servers on loopback: an evicting policy stops the gateway at start with the setting and
// the command to change it; in production `appendfsync everysec` does too (and `always` starts); a policy changed to
// an evicting one while running is found at the next reconnect, and paid calls are refused until it is fixed.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDurableRedis, type DurableRedis } from '../../helpers/durable-redis.js';
import { http } from '../../helpers/http.js';
import { stackRoleEnv, startProcess, type RunningProcess } from '../../helpers/processes.js';
import { startListedStack, type ListedStack } from '../../helpers/listed-stack.js';
import { testRedisPrefix, type TestStack } from '../../helpers/services.js';
import { createConsumer } from '../../helpers/fixtures.js';

/** A gateway of the test stack's marketplace on `redisUrl`, under a fresh key prefix there. */
function gatewayEnv(stack: TestStack, redisUrl: string, extra: Record<string, string> = {}) {
  const env = stackRoleEnv(stack, {
    REDIS_URL: redisUrl,
    REDIS_KEY_PREFIX: testRedisPrefix(),
    SHUTDOWN_GRACE_MS: '2000',
    ...extra,
  });
  if (env.NODE_ENV === 'production') delete env.UPSTREAM_ALLOW_PRIVATE;
  return env;
}

/** Production needs these besides Redis (core/config.ts); nothing here is contacted before the Redis check. */
const PRODUCTION = {
  NODE_ENV: 'production',
  SMTP_URL: 'smtp://127.0.0.1:9',
  CHALLENGE_VERIFY_URL: 'http://127.0.0.1:9/verify',
  CHALLENGE_SECRET: 'x'.repeat(32),
};

async function refusal(env: Record<string, string>): Promise<string> {
  const started = await startProcess({ roles: ['gateway'], env, readyTimeoutMs: 30_000 }).then(
    async (p) => {
      await p.stop('SIGKILL');
      return null;
    },
    (err: Error) => err.message,
  );
  expect(started, 'the gateway started against a Redis that breaks the requirements').not.toBeNull();
  return started!;
}

describe('Redis requirements of the money path', () => {
  let s: ListedStack;
  const servers: DurableRedis[] = [];
  const processes: RunningProcess[] = [];

  beforeAll(async () => {
    s = await startListedStack({ endpoints: [{ method: 'GET', path: '/paid', priceCents: 2 }] });
  }, 60_000);
  afterAll(async () => {
    if (s) expect(await s.stack.services.ledger.findDrift()).toEqual([]);
    for (const p of processes) await p.stop('SIGKILL');
    for (const s of servers) await s.stop();
    await s?.close();
  });

  it('refuses to start against maxmemory-policy allkeys-lru, naming the setting and the command', async () => {
    const redis = await startDurableRedis(['--maxmemory-policy', 'allkeys-lru']);
    servers.push(redis);
    const message = await refusal(gatewayEnv(s.stack, redis.url));
    expect(message).toContain('maxmemory-policy is allkeys-lru, it must be noeviction');
    expect(message).toContain('CONFIG SET maxmemory-policy noeviction');
    expect(message).toContain('maxmemory-policy noeviction` in redis.conf');
  }, 60_000);

  it('in production refuses appendfsync everysec (and appendonly no), and starts with appendfsync always', async () => {
    const everysec = await startDurableRedis(); // appendonly yes, appendfsync everysec
    servers.push(everysec);
    const message = await refusal(gatewayEnv(s.stack, everysec.url, PRODUCTION));
    expect(message).toContain('appendfsync is everysec, production needs always');
    expect(message).toContain('CONFIG SET appendfsync always');

    const off = await startDurableRedis(['--appendonly', 'no']);
    servers.push(off);
    expect(await refusal(gatewayEnv(s.stack, off.url, PRODUCTION))).toContain('appendonly is no, production needs yes');

    const always = await startDurableRedis(['--appendfsync', 'always']);
    servers.push(always);
    const gw = await startProcess({ roles: ['gateway'], env: gatewayEnv(s.stack, always.url, PRODUCTION) });
    processes.push(gw);
    expect(gw.output()).not.toContain('appendfsync');
  }, 90_000);

  it('an evicting policy set while running is found at the next reconnect: paid calls refused until fixed', async () => {
    const redis = await startDurableRedis(['--appendonly', 'no']);
    servers.push(redis);
    const gw = await startProcess({ roles: ['gateway'], env: gatewayEnv(s.stack, redis.url) });
    processes.push(gw);
    // Outside production a Redis without appendfsync always starts, with one warning naming what a crash loses.
    expect(gw.output()).toContain('a crash of Redis can lose answered calls');
    const c = await createConsumer(s.stack.services, 100);
    const call = () => http(gw.urls.gateway, 'GET', `/v1/proxy/${s.api.slug}/paid`, { token: c.apiKey });
    expect((await call()).status).toBe(200);

    const admin = new Redis(redis.url);
    try {
      await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
      await admin.call('CLIENT', 'KILL', 'TYPE', 'normal'); // the gateway reconnects ('ready') and checks again
      await expect
        .poll(async () => JSON.stringify((await call()).body), { timeout: 10_000 })
        .toContain('maxmemory-policy is allkeys-lru, it must be noeviction');
      const refused = await call();
      expect(refused.status).toBe(503);
      expect(gw.output()).toContain('Redis no longer meets the money path requirements');

      await admin.config('SET', 'maxmemory-policy', 'noeviction');
      await admin.call('CLIENT', 'KILL', 'TYPE', 'normal');
      await expect.poll(async () => (await call()).status, { timeout: 10_000 }).toBe(200);
    } finally {
      admin.disconnect();
    }
  }, 90_000);
});
