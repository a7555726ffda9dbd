// The embedded database serves several clients over one PGlite session (db/embedded-thread.js): the all-in-one's main
// thread and its gateway thread each hold a connection. Each client's unit (its messages up to a Sync or a simple
// Query, or a whole transaction) must run without another client's messages in between, and what a client leaves in
// the one session (a transaction, named statements) must not outlive it.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedDatabase, type EmbeddedDatabase } from '../../../db/embedded.js';

let dir: string;
let db: EmbeddedDatabase;
const clients: pg.Client[] = [];

async function connect(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  clients.push(client);
  return client;
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'embedded-sessions-'));
  db = await startEmbeddedDatabase(path.join(dir, 'data'));
  const setup = await connect();
  await setup.query('create table marks (who text not null, n int not null)');
}, 60_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
  await db?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('the embedded database with several clients', () => {
  it("runs each client's extended-protocol queries whole: concurrent unnamed statements never cross", async () => {
    const [a, b, c] = [await connect(), await connect(), await connect()];
    const big = 'x'.repeat(512 * 1024);
    // Each client sends its next query as soon as the last one answered, all three at once.
    const loop = async (run: (i: number) => Promise<void>) => {
      for (let i = 0; i < 60; i++) await run(i);
    };
    await Promise.all([
      // A message larger than a socket read (a usage commit's arrays can be): it arrives in several chunks, and
      // another client's unit must not run between them.
      loop(async (i) => {
        const r = await a.query<{ v: number }>('select length($1::text) + $2::int as v', [big, i]);
        expect(r.rows[0]!.v).toBe(big.length + i);
      }),
      loop(async (i) => {
        const r = await b.query<{ v: string }>("select $1::text || '-b' as v", [`x${i}`]);
        expect(r.rows[0]!.v).toBe(`x${i}-b`);
        await b.query('select 1');
      }),
      loop(async (i) => {
        const r = await c.query<{ v: string; w: number }>('select $1::text as v, $2::int as w', [`c${i}`, i]);
        expect(r.rows[0]).toEqual({ v: `c${i}`, w: i });
      }),
    ]);
  });

  it("keeps another client's statements out of an open transaction, which rolls back alone", async () => {
    const [a, b] = [await connect(), await connect()];
    await a.query('begin');
    await a.query("insert into marks values ('a', 1)");
    // b's autocommit insert waits for a's transaction to end instead of running inside it.
    const bInsert = b.query("insert into marks values ('b', 2)");
    await new Promise((r) => setTimeout(r, 50));
    await a.query("insert into marks values ('a', 3)");
    await a.query('rollback');
    await bInsert;
    const rows = (await b.query<{ who: string; n: number }>('select who, n from marks order by n')).rows;
    expect(rows).toEqual([{ who: 'b', n: 2 }]);
  });

  it("drops a departed client's transaction and named statements, so its reconnection prepares them again", async () => {
    const first = await connect();
    await first.query({ name: 'marks_count', text: 'select count(*)::int as n from marks' });
    await first.query('begin');
    await first.query("insert into marks values ('gone', 9)");
    await first.end();
    const again = await connect();
    const counted = await again.query<{ n: number }>({
      name: 'marks_count',
      text: 'select count(*)::int as n from marks',
    });
    expect(counted.rows[0]!.n).toBe(1); // only b's row: the departed client's insert was rolled back
    expect(
      (await again.query<{ t: string }>('select pg_current_xact_id_if_assigned()::text as t')).rows[0]!.t,
    ).toBeNull();
  });
});
