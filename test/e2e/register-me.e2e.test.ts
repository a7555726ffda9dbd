// The real processes, started the way users start them, run twice: `npm start` on the embedded defaults (PGlite,
// in-process counters, a Temporal dev server it spawns itself) and the all-in-one launcher on real Postgres, Redis
// and Temporal. The same checks run against both.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { describe as show, http } from '../helpers/http.js';
import { processEnv, startProcess, type RunningProcess } from '../helpers/processes.js';
import { tokenFromMail } from '../helpers/full-stack.js';
import { startSmtpCapture, type SmtpCapture } from '../helpers/smtp.js';
import { startUpstream, type Upstream } from '../helpers/upstream.js';
import { startTemporal } from '../helpers/temporal.js';
import { connectV2, LEGACY } from '../helpers/mcp-eras.js';

interface Mode {
  name: string;
  backends: { db: string; counters: string };
  start(): Promise<{ proc: RunningProcess; cleanup(): Promise<void> }>;
}

// The whole loop needs mail (sign-up verification) and an upstream on loopback, shared by both modes.
let smtp: SmtpCapture;
let upstream: Upstream;
const loopEnv = () => ({ SMTP_URL: smtp.url, UPSTREAM_ALLOW_PRIVATE: 'true' });

beforeAll(async () => {
  smtp = await startSmtpCapture();
  upstream = await startUpstream((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ symbol: 'ACME', price: 42, path: req.url }));
  });
});
afterAll(async () => {
  await smtp?.close();
  await upstream?.close();
});

const MODES: Mode[] = [
  {
    name: 'npm start on embedded defaults',
    backends: { db: 'pglite', counters: 'memory' },
    async start() {
      const dataDir = await mkdtemp(path.join(os.tmpdir(), 'mp-e2e-'));
      const proc = await startProcess({
        npmStart: true,
        embeddedTemporal: true,
        // A newcomer's first start with the demo catalog: the public directory is imported into PGlite.
        env: { DATA_DIR: dataDir, DEMO_CATALOG: '1', ...loopEnv() },
      });
      return { proc, cleanup: () => rm(dataDir, { recursive: true, force: true }) };
    },
  },
  {
    name: 'all-in-one on real Postgres, Redis and Temporal',
    backends: { db: 'postgres', counters: 'redis' },
    async start() {
      const db: TestDatabase = await createTestDatabase({ empty: true }); // the launcher migrates it
      const temporal: { env: TestWorkflowEnvironment; address: string } = await startTemporal();
      const proc = await startProcess({
        roles: ['all'],
        env: processEnv(db.url, temporal.address, loopEnv()),
      });
      return {
        proc,
        async cleanup() {
          await temporal.env.teardown();
          await db.drop();
        },
      };
    },
  },
];

describe.each(MODES)('$name', (mode) => {
  let proc: RunningProcess;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    const started = await mode.start();
    proc = started.proc;
    cleanup = () => started.cleanup();
  }, 180_000);
  afterAll(async () => {
    if (proc) await proc.stop('SIGKILL');
    await cleanup?.();
  });

  it('reports db, counters and temporal up on /health of all three surfaces (up/down only, no details)', async () => {
    for (const [surface, url] of [
      ['api', proc.urls.api],
      ['gateway', proc.urls.gateway],
      ['mcp', proc.urls.mcp],
    ] as const) {
      const res = await http(url, 'GET', '/health');
      expect(res.status, `${surface}: ${show(res)}`).toBe(200);
      expect(res.body.data).toMatchObject({
        status: 'ok',
        service: surface,
      });
      expect(res.body.data.checks).toEqual({
        db: { status: 'up' },
        counters: { status: 'up' },
        temporal: { status: 'up' },
      });
    }
    if (proc.urls.temporalUi) {
      const ui = await fetch(proc.urls.temporalUi);
      expect(ui.status).toBe(200);
      expect(await ui.text()).toMatch(/<html/i);
    }
  });

  it('with the demo catalog (embedded first start), the directory is listed, searchable and not callable', async () => {
    if (mode.backends.db !== 'pglite') return; // the demo flag is only set for the embedded start
    const categories = await http(proc.urls.api, 'GET', '/v1/categories');
    expect(categories.status, show(categories)).toBe(200);
    const counts = (categories.body.data as { api_count: number }[]).map((c) => c.api_count);
    expect(counts.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(1_706);
    const found = await http(proc.urls.api, 'GET', `/v1/search?q=${encodeURIComponent('weather forecast')}&limit=5`);
    expect(found.status, show(found)).toBe(200);
    expect(found.body.data.length).toBe(5);
    expect(found.body.data[0]).toMatchObject({ source: 'directory' });
    const reg = await http(proc.urls.api, 'POST', '/v1/register');
    const gw = await http(proc.urls.gateway, 'GET', `/v1/proxy/${found.body.data[0].slug as string}/x`, {
      token: reg.body.data.api_key,
    });
    expect(gw.status, show(gw)).toBe(404);
    expect(gw.body.error.message).toMatch(/directory/i);
  });

  it('registers, then /v1/me answers with the org and 0 credits', async () => {
    const reg = await http(proc.urls.api, 'POST', '/v1/register');
    expect(reg.status, show(reg)).toBe(201);
    expect(reg.headers.get('x-svc-key')).toBe(reg.body.data.api_key);
    const me = await http(proc.urls.api, 'GET', '/v1/me', { token: reg.body.data.api_key });
    expect(me.status, show(me)).toBe(200);
    expect(me.body.data).toMatchObject({ org_id: reg.body.data.org_id, credit_cents: 0 });
    // The gateway in the same deployment knows the key: past auth, the unknown slug is the answer.
    const gw = await http(proc.urls.gateway, 'GET', '/v1/proxy/nothing-here/x', { token: reg.body.data.api_key });
    expect(gw.status, show(gw)).toBe(404);
  });

  it('the whole loop: a provider lists and publishes an API, a consumer calls it through the gateway and is billed', async () => {
    const api = proc.urls.api;
    const person = async (name: string) => {
      const email = `${name}-${Date.now()}@example.com`;
      const res = await http(api, 'POST', '/v1/signup', { body: { email, name } });
      expect(res.status, show(res)).toBe(201);
      const mail = await smtp.waitForMail(email, { timeoutMs: 30_000 });
      const verified = await http(api, 'POST', '/v1/auth/verify-email', { body: { token: tokenFromMail(mail.text) } });
      expect(verified.status, show(verified)).toBe(200);
      return res.body.data as { api_key: string; session_token: string };
    };
    const provider = await person('provider');
    const slug = `quotes-${Date.now().toString(36)}`;
    const created = await http(api, 'POST', '/v1/provider/apis', {
      token: provider.session_token,
      body: {
        name: 'Quotes',
        slug,
        summary: 'Stock quotes',
        base_url: upstream.url,
        endpoints: [{ method: 'GET', path: '/quote/{symbol}', price_cents: 3 }],
      },
    });
    expect(created.status, show(created)).toBe(201);
    const published = await http(api, 'POST', `/v1/provider/apis/${created.body.data.api_id}/publish`, {
      token: provider.session_token,
      body: { acceptTerms: true, skipVerify: true },
    });
    expect(published.body.data?.status, show(published)).toBe('live');

    const consumer = await person('consumer');
    // The starter credit is released by signupCreditsWorkflow once the email is verified.
    let credit = 0;
    for (let i = 0; i < 100 && credit < 100; i++) {
      credit = (await http(api, 'GET', '/v1/me', { token: consumer.api_key })).body.data.credit_cents as number;
      if (credit < 100) await new Promise((r) => setTimeout(r, 200));
    }
    expect(credit).toBe(100);
    const call = (headers: Record<string, string> = {}) =>
      http(proc.urls.gateway, 'GET', `/v1/proxy/${slug}/quote/ACME?fields=price`, { token: consumer.api_key, headers });
    const first = await call({ 'Idempotency-Key': 'e2e-1' });
    expect(first.status, show(first)).toBe(200);
    expect(first.body.data).toEqual({ symbol: 'ACME', price: 42, path: '/quote/ACME?fields=price' });
    expect(first.body.meta).toMatchObject({ cost_cents: 3, credit_applied_cents: 3, billable_cents: 0 });
    const replay = await call({ 'Idempotency-Key': 'e2e-1' });
    expect(replay.body.meta).toMatchObject({ replayed: true, original_request_id: first.body.meta.request_id });
    expect((await http(api, 'GET', '/v1/me', { token: consumer.api_key })).body.data.credit_cents).toBe(97);
    const usage = await http(api, 'GET', '/v1/usage', { token: consumer.api_key });
    expect(usage.body.data).toHaveLength(1);
    expect(usage.body.data[0]).toMatchObject({ api_slug: slug, cost_cents: 3, status: 200 });

    // The agent tools reach the same gateway (in the all-in-one, the gateway's own thread) and are billed alike.
    const agent = await connectV2(proc.urls.mcp, LEGACY, consumer.api_key, { name: 'register-me' });
    try {
      const viaTools = await agent.callTool({ name: 'call_api', arguments: { slug, endpoint: '/quote/ACME' } });
      expect(viaTools.isError, JSON.stringify(viaTools.content)).toBeFalsy();
      expect(viaTools.structuredContent).toMatchObject({ status: 200, body: { symbol: 'ACME', price: 42 } });
    } finally {
      await agent.close();
    }
    expect((await http(api, 'GET', '/v1/me', { token: consumer.api_key })).body.data.credit_cents).toBe(94);

    // A key revoked on the control plane is refused by the gateway within a second (the invalidation crosses from
    // the control plane's thread to the gateway's).
    const made = await http(api, 'POST', '/v1/keys', { token: consumer.session_token, body: { name: 'short-lived' } });
    expect(made.status, show(made)).toBe(201);
    const shortLived = made.body.data as { id: string; api_key: string };
    const viaShortLived = () =>
      http(proc.urls.gateway, 'GET', `/v1/proxy/${slug}/quote/ACME`, { token: shortLived.api_key });
    expect((await viaShortLived()).status).toBe(200);
    const revoked = await http(api, 'DELETE', `/v1/keys/${shortLived.id}`, { token: consumer.session_token });
    expect(revoked.status, show(revoked)).toBe(200);
    const since = Date.now();
    let status = 200;
    while (status === 200 && Date.now() - since < 1_000) status = (await viaShortLived()).status;
    expect(status).toBe(401);
  });

  it('answers failures with the envelope whose request_id equals X-Request-Id', async () => {
    const cases = [
      await http(proc.urls.api, 'GET', '/v1/me'),
      await http(proc.urls.api, 'POST', '/v1/register', {
        rawBody: '{',
        headers: { 'content-type': 'application/json' },
      }),
      await http(proc.urls.api, 'GET', '/v1/does-not-exist'),
      await http(proc.urls.gateway, 'GET', '/v1/proxy/x/y', { token: `sess_${'s'.repeat(30)}` }),
      await http(proc.urls.mcp, 'POST', '/mcp', { body: {} }),
    ];
    expect(cases.map((c) => c.status)).toEqual([401, 400, 404, 401, 401]);
    for (const res of cases) {
      expect(res.body.ok, show(res)).toBe(false);
      expect(res.body.meta.request_id).toBe(res.headers.get('x-request-id'));
    }
    expect(proc.output()).not.toMatch(/"level":50/); // no error logged for any of them
  });

  it('shuts down gracefully on SIGTERM', async () => {
    await proc.stop('SIGTERM');
    expect(proc.output()).toContain('"msg":"stopped"');
    await expect(fetch(`${proc.urls.api}/health`)).rejects.toThrow();
  });
});
