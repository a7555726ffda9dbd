// Search reads on a read replica (issue 33). A real streaming replica: a scratch primary (the shared test server
// allows no replication connections; test/helpers/replica-postgres.ts says why), `pg_basebackup -R -X stream` of it,
// started as a hot standby on loopback. The control plane runs with DATABASE_URL on the primary and DATABASE_READ_URL
// on the replica: search answers from the standby, and reads really go there: with the standby's replay paused, a
// listing published on the primary stays unfound (it would be found within 0.4 s on the primary), and once replay
// resumes it is found within the documented staleness (replica lag + the per-process copy's 0.4 s refresh).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../../api/app.js';
import { replicaBarrier, waitForReplica } from '../../../core/db/replica.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { sql } from '../../helpers/db.js';
import { closeAll } from '../../helpers/fixtures.js';
import { http, serve, describe as show } from '../../helpers/http.js';
import { startStreamingReplica, type StreamingReplica } from '../../helpers/replica-postgres.js';
import { startScratchPostgres, type ScratchPostgres } from '../../helpers/scratch-postgres.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';

const DATABASE = 'search';
/** The documented staleness on loopback (lag of milliseconds + the 0.4 s refresh), with room for a loaded machine. */
const STALENESS_BOUND_MS = 3_000;

describe('search reads on a streaming read replica (issue 33)', () => {
  let primary: ScratchPostgres | undefined;
  let replica: StreamingReplica | undefined;
  let stack: TestStack | undefined;
  let api: RunningHttpServer | undefined;
  let provider: Person;
  const timings: Record<string, number> = {};

  beforeAll(async () => {
    let t = Date.now();
    primary = await startScratchPostgres({ database: DATABASE });
    timings.primaryMs = Date.now() - t;
    t = Date.now();
    replica = await startStreamingReplica(primary);
    timings.replicaMs = Date.now() - t;
    timings.backupMs = replica.backupMs;
    stack = await createTestStack({
      db: { name: DATABASE, url: primary.url, drop: () => Promise.resolve() },
      env: { DATABASE_READ_URL: replica.urlOf(DATABASE) },
    });
    api = await serve(createApiApp(stack.services).callback());
    provider = await createPerson(stack.services);
  }, 120_000);
  afterAll(async () => {
    console.log(`search-replica set-up: ${JSON.stringify(timings)}`);
    await closeAll(api, stack);
    await replica?.stop();
    await primary?.stop();
  });

  const onReplica = (text: string) => sql(replica!.urlOf(DATABASE), text);
  const slugsFor = async (q: string): Promise<string[]> => {
    const res = await http(api!.url, 'GET', `/v1/search?q=${encodeURIComponent(q)}&limit=20`);
    expect(res.status, show(res)).toBe(200);
    return (res.body.data as { slug: string }[]).map((i) => i.slug);
  };

  /** Creates a listing as its provider does and publishes it as the publish workflow's activity does (on the primary). */
  async function publish(slug: string, summary: string): Promise<void> {
    const created = await http(api!.url, 'POST', '/v1/provider/apis', {
      token: provider.session,
      body: {
        name: slug,
        slug,
        summary,
        base_url: 'http://127.0.0.1:9/v1',
        endpoints: [{ method: 'GET', path: '/x' }],
      },
    });
    expect(created.status, show(created)).toBe(201);
    await stack!.services.providerLifecycle.setStatus(created.body.data.api_id as string, 'live');
  }

  it('reads through a hot standby streaming from the primary, and search answers from it', async () => {
    const s = stack!.services;
    const [standby] = await s.readOrm.em.fork().execute<[{ r: boolean }]>('select pg_is_in_recovery() as r');
    const [main] = await s.orm.em.fork().execute<[{ r: boolean }]>('select pg_is_in_recovery() as r');
    expect({ readOrm: standby.r, orm: main.r }).toEqual({ readOrm: true, orm: false });
    expect(await onReplica('select status from pg_stat_wal_receiver')).toEqual([{ status: 'streaming' }]);

    await publish('otter-tides', 'Tide tables for otter watchers on every coast');
    expect(await waitForReplica(s.orm, s.readOrm)).toBe(true);
    // What a forced sync does with a replica (core/db/replica.ts): the replica has replayed the write, then the copy.
    await s.search.sync(true);
    expect(await slugsFor('otter tide tables')).toContain('otter-tides');
  });

  it('a listing published while replay is paused is not found; after resume it is, within the documented staleness', async () => {
    const s = stack!.services;
    await onReplica('select pg_wal_replay_pause()');
    const paused = async () =>
      (await onReplica('select pg_get_wal_replay_pause_state() as p'))[0]!.p === 'paused' || undefined;
    for (let i = 0; i < 100 && !(await paused()); i++) await new Promise((r) => setTimeout(r, 20));
    expect(await paused()).toBe(true);

    await publish('pangolin-scales', 'Weighs pangolin scales for wildlife rescue centres');
    // On the primary it is live and indexed: a search reading the primary would find it within 0.4 s.
    const onPrimary = await sql(
      primary!.url,
      `select a.status, s.api_id is not null as indexed from apis a left join api_search s on s.api_id = a.id
        where a.slug = 'pangolin-scales'`,
    );
    expect(onPrimary).toEqual([{ status: 'live', indexed: true }]);
    // A forced read's barrier (core/db/replica.ts) gives up after its bound, says so, and the read goes on.
    expect(await replicaBarrier(s.orm, s.readOrm, s.logger, 300)()).toBe(false);
    expect(stack!.logs.text()).toContain('read replica: still behind the primary');

    // Well past the copy's 0.4 s refresh, and after a forced sync: never found while the replica has not replayed it.
    const until = Date.now() + 1_500;
    while (Date.now() < until) {
      expect(await slugsFor('pangolin scales')).not.toContain('pangolin-scales');
      await new Promise((r) => setTimeout(r, 100));
    }
    await s.search.sync(true);
    expect(await slugsFor('pangolin scales')).not.toContain('pangolin-scales');

    await onReplica('select pg_wal_replay_resume()');
    const resumed = Date.now();
    let found = false;
    while (!found && Date.now() - resumed < STALENESS_BOUND_MS) {
      found = (await slugsFor('pangolin scales')).includes('pangolin-scales');
      if (!found) await new Promise((r) => setTimeout(r, 50));
    }
    timings.foundAfterResumeMs = Date.now() - resumed;
    expect(found, `not found ${STALENESS_BOUND_MS} ms after replay resumed`).toBe(true);
    expect(await waitForReplica(s.orm, s.readOrm)).toBe(true);
  });
});
