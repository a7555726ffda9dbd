// The floor of a metered Node gateway under our durability contract (issue 23's "what would it take"): the bare proxy
// (bench/gateway/bare-proxy.ts) plus only the work no design can skip, each at its cheapest, and nothing else:
// - the caller's key: SHA-256 of the bearer and one Map lookup (no scopes, no caps beyond a counter);
// - admission in memory (a decrement: what a lease gives a busy key);
// - the usage record built once (a ~250-byte positional JSON line, as core/spend/call-codec.ts builds it);
// - the durable point before the answer: the records of the calls that end in one turn of the event loop appended to
//   a Redis stream in ONE script (one round trip per batch, as core/spend/settle-batcher.ts does);
// - the books: the batch's rows inserted into Postgres in one multi-row statement after the answer (one row per call:
//   the `usage_events` row the gateway cannot do without), off the answer's path;
// - the success envelope around the upstream's bytes.
// No metrics, logging, idempotency, refunds, catalog, governance or error handling: what remains between the floor and
// the gateway is the price of those. Run as a child: BARE_UPSTREAM=… FLOOR_REDIS_URL=… FLOOR_DATABASE_URL=…
// node --import tsx bench/gateway/floor-proxy.ts; prints "listening <port>" once ready. FLOOR_KEY is the one valid key.
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Redis } from 'ioredis';
import pg from 'pg';
import { proxyServer, serveUntilSignalled, upstreamPool } from './proxy-process.js';

const upstream = process.env.BARE_UPSTREAM;
const redisUrl = process.env.FLOOR_REDIS_URL;
const databaseUrl = process.env.FLOOR_DATABASE_URL;
const validKey = process.env.FLOOR_KEY ?? 'sk_floor_0123456789abcdef';
if (!upstream || !redisUrl || !databaseUrl) throw new Error('BARE_UPSTREAM, FLOOR_REDIS_URL, FLOOR_DATABASE_URL');

const pool = upstreamPool(upstream);
const redis = new Redis(redisUrl, { enableAutoPipelining: true, keyPrefix: `floor:${process.pid}:` });
redis.defineCommand('appendBatch', {
  numberOfKeys: 1,
  lua: "return redis.call('XADD', KEYS[1], '*', 'e', ARGV[1])",
});
const db = new pg.Pool({ connectionString: databaseUrl, max: 2 });

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const keys = new Map([[sha(validKey), { orgId: 'org_floor', keyId: 'key_floor', room: Number.MAX_SAFE_INTEGER }]]);

interface Waiting {
  record: string;
  resolve: () => void;
  reject: (e: unknown) => void;
}
let batch: Waiting[] = [];
let scheduled = false;
let inFlight = false;
const rows: string[][] = [];
let seq = 0;

function settle(record: string): Promise<void> {
  return new Promise((resolve, reject) => {
    batch.push({ record, resolve, reject });
    schedule();
  });
}

function schedule(): void {
  if (scheduled || inFlight || batch.length === 0) return;
  scheduled = true;
  setImmediate(() => {
    scheduled = false;
    const go = batch;
    batch = [];
    inFlight = true;
    (redis as unknown as { appendBatch(k: string, e: string): Promise<string> })
      .appendBatch('u', go.map((w) => w.record).join('\n'))
      .then(
        () => {
          for (const w of go) {
            rows.push(JSON.parse(w.record) as string[]);
            w.resolve();
          }
          drain();
        },
        (err: unknown) => go.forEach((w) => w.reject(err)),
      )
      .finally(() => {
        inFlight = false;
        schedule();
      });
  });
}

let draining = false;
function drain(): void {
  if (draining || rows.length === 0) return;
  draining = true;
  setImmediate(() => {
    const go = rows.splice(0, 1_000);
    const values = go.map((_, i) => `($${i * 5 + 1}, $${i * 5 + 2}, $${i * 5 + 3}, $${i * 5 + 4}, $${i * 5 + 5})`);
    db.query(
      `insert into floor_usage (id, org_id, key_id, cost_cents, record) values ${values.join(', ')}`,
      go.flatMap((r) => [r[0], r[1], r[2], Number(r[3]), r.join(',')]),
    )
      .catch((err: unknown) => console.error('floor drain failed', err))
      .finally(() => {
        draining = false;
        drain();
      });
  });
}

async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const auth = req.headers.authorization ?? '';
  const key = keys.get(sha(auth.slice(7)));
  if (!key || key.room < 1) {
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end('{"ok":false}');
    return;
  }
  key.room -= 1;
  const upstreamRes = await pool.request({ path: req.url ?? '/', method: 'GET', headers: {} });
  const payload = await upstreamRes.body.text();
  const id = `use_floor_${process.pid}_${++seq}`;
  await settle(JSON.stringify([id, key.orgId, key.keyId, '1', 'bench-quotes', 'GET', req.url, upstreamRes.statusCode]));
  const body = `{"ok":true,"data":${payload},"meta":{"request_id":"${id}","cost_cents":1}}`;
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

await db.query(
  `create table if not exists floor_usage (id text primary key, org_id text not null, key_id text not null,
     cost_cents integer not null, record text not null, created_at timestamptz not null default now())`,
);
serveUntilSignalled(proxyServer(forward), () => Promise.allSettled([pool.close(), db.end(), redis.quit()]));
