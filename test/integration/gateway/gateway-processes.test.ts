// The gateway as several processes on one port (GATEWAY_PROCESSES / --processes, node:cluster), with real processes:
// both workers serve, paid calls spread over them are billed exactly once, the rate limit holds across them, a killed
// worker is replaced, SIGTERM to the supervisor stops every worker cleanly; embedded mode and mixed roles refuse.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../helpers/db.js';
import { ROOT } from '../../helpers/env.js';
import type { LiveApi } from '../../helpers/listings.js';
import { stackRoleEnv, startProcess, type RunningProcess } from '../../helpers/processes.js';
import { startListedStack } from '../../helpers/listed-stack.js';
import type { TestStack } from '../../helpers/services.js';
import type { Upstream } from '../../helpers/upstream.js';
import { createConsumer } from '../../helpers/fixtures.js';

/** One request on its own connection (no keep-alive), so the cluster hands each to the next worker in turn. */
function fresh(base: string, path: string, token?: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request(
      base + path,
      { agent: false, headers: token ? { authorization: `Bearer ${token}` } : {} },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }));
      },
    );
    req.on('error', reject);
    req.setTimeout(5_000, () => req.destroy(new Error(`no answer to ${path} within 5 s`)));
    req.end();
  });
}

/** The pid behind a /health answer (503 here: no Temporal, so the report sits in the error details). */
async function healthPid(base: string): Promise<number> {
  const { body } = await fresh(base, '/health');
  return Number(body?.data?.pid ?? body?.error?.details?.pid);
}

async function pidsSeen(base: string, tries = 12): Promise<Set<number>> {
  const pids = new Set<number>();
  for (let i = 0; i < tries; i++) pids.add(await healthPid(base));
  return pids;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('gateway processes', () => {
  let stack: TestStack;
  let upstream: Upstream;
  let api: LiveApi;
  let gw: RunningProcess | undefined;

  beforeAll(async () => {
    ({ stack, upstream, api } = await startListedStack({
      endpoints: [
        { method: 'GET', path: '/paid', priceCents: 3 },
        { method: 'GET', path: '/free', priceCents: 0 },
      ],
    }));
    gw = await startProcess({
      roles: ['gateway', '--processes', '2'],
      env: stackRoleEnv(stack, { GATEWAY_RATE_LIMIT_PER_MIN: '40', SHUTDOWN_GRACE_MS: '2000' }),
    });
  }, 120_000);
  afterAll(async () => {
    await gw?.stop('SIGKILL');
    await stack?.services.earnings.foldAll();
    const report = await stack?.services.reconciliation.run();
    expect(report?.ok, JSON.stringify(report)).toBe(true);
    await stack?.close();
    await upstream?.close();
  });

  it('two workers serve one port, each with its own pid', async () => {
    const pids = await pidsSeen(gw!.urls.gateway);
    expect(pids.size).toBe(2);
    expect(pids.has(gw!.child.pid!)).toBe(false); // the supervisor serves nothing itself
    expect(gw!.output()).toContain('"processes":2');
  });

  it('paid calls spread over both workers are billed exactly once; the rate limit holds across them', async () => {
    // The rate-limit half counts per minute: start early in a minute so all of it lands in one window.
    const second = new Date().getSeconds();
    if (second > 40) await new Promise((r) => setTimeout(r, (61 - second) * 1_000));
    const c = await createConsumer(stack.services, 300);
    const before = upstream.seen.length;
    const results = await Promise.all(
      Array.from({ length: 30 }, () => fresh(gw!.urls.gateway, `/v1/proxy/${api.slug}/paid`, c.apiKey)),
    );
    expect(results.map((r) => r.status)).toEqual(Array(30).fill(200));
    expect(upstream.seen.length - before).toBe(30);
    await expect
      .poll(
        async () =>
          (
            await sql(
              stack.db.url,
              "select count(*)::int as n, coalesce(sum(cost_cents), 0)::int as cost from usage_events where org_id = $1 and outcome = 'success'",
              [c.orgId],
            )
          )[0],
        { timeout: 10_000 },
      )
      .toEqual({ n: 30, cost: 90 });
    const [org] = await sql<{ credit_cents: string }>(stack.db.url, 'select credit_cents from orgs where id = $1', [
      c.orgId,
    ]);
    expect(Number(org!.credit_cents)).toBe(300 - 90);

    // 40 per minute for the key, whichever worker counts: 10 more pass, then 429 (unless the minute rolled over).
    const more: number[] = [];
    for (let i = 0; i < 16; i++)
      more.push((await fresh(gw!.urls.gateway, `/v1/proxy/${api.slug}/free`, c.apiKey)).status);
    const passed = more.filter((s) => s === 200).length;
    expect(passed === 10 || (passed > 10 && new Date().getSeconds() < 5)).toBe(true);
    expect(more.filter((s) => s !== 200 && s !== 429)).toEqual([]);
  }, 60_000);

  it('a killed worker is replaced, and both slots serve again', async () => {
    const before = await pidsSeen(gw!.urls.gateway);
    const [victim] = [...before];
    process.kill(victim!, 'SIGKILL');
    let now = new Set<number>();
    const deadline = Date.now() + 45_000;
    while (Date.now() < deadline && !(now.size === 2 && !now.has(victim!))) {
      await new Promise((r) => setTimeout(r, 300));
      now = await pidsSeen(gw!.urls.gateway, 8).catch(() => new Set<number>());
    }
    expect([...now], gw!.output().slice(-3_000)).not.toContain(victim);
    expect(now.size).toBe(2);
    expect(gw!.output()).toContain('gateway worker died; replacing it');
  }, 90_000);

  it('SIGTERM to the supervisor alone stops every worker gracefully, exit 0', async () => {
    const workers = await pidsSeen(gw!.urls.gateway);
    expect(workers.size).toBe(2);
    process.kill(gw!.child.pid!, 'SIGTERM'); // not the group: the supervisor must pass it on
    const code = await new Promise((resolve) => gw!.child.once('exit', (c, s) => resolve(c ?? s)));
    expect(code).toBe(0);
    for (const pid of workers) expect(alive(pid)).toBe(false);
    // Each worker ran its own shutdown (committer and sweeper drained) and said so.
    expect(gw!.output().match(/"msg":"stopped"/g)?.length).toBeGreaterThanOrEqual(3);
  }, 60_000);
});

describe('gateway processes: refusals', () => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'gw-procs-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));
  const run = (args: string[], env: Record<string, string>) =>
    new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts', ...args], {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATA_DIR: tmp, ...env },
      });
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => (out += c.toString()));
      child.once('exit', (code) => resolve({ code, out }));
    });

  it('embedded mode (no DATABASE_URL / REDIS_URL) refuses more than one process', async () => {
    const { code, out } = await run(['gateway'], { GATEWAY_PROCESSES: '2' });
    expect(code).toBe(1);
    expect(out).toContain('GATEWAY_PROCESSES: more than one gateway process needs DATABASE_URL and REDIS_URL');
  }, 90_000);

  it('all-in-one (or any role besides the gateway) refuses --processes N', async () => {
    const { code, out } = await run(['all', '--processes', '3'], {
      DATABASE_URL: 'postgres://127.0.0.1:1/none',
      REDIS_URL: 'redis://127.0.0.1:1',
    });
    expect(code).toBe(1);
    expect(out).toContain('only the gateway role alone runs several processes');
  }, 90_000);
});
