/**
 * The demo's history (issue 31 item 7): five days of calls to the sample APIs by four sample consumer orgs, so stats,
 * leaderboards and analytics have something to show on a first start. The history is real bookkeeping, never
 * synthetic rollup rows: each sample consumer is granted credit on the ledger (`grant`, idempotency key
 * `demo-consumer:{n}`), and every call, free, paid or failed, goes through the gateway's own group commit
 * (core/spend/usage-committer.ts) with its time in the past: usage rows, usage batches with their one ledger debit
 * each, and the providers' earnings queued like any call's. So `npm run admin -- reconcile` holds after the demo as it
 * does after real traffic. The rollups are then rewound to the history's start and run, so the stats show at once.
 *
 * Written once: when the sample APIs already have calls (an earlier start wrote the history), nothing is added.
 * Deterministic but for the clock: the same seed gives the same calls relative to the start.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { Org } from '../../db/entities/index.js';
import type { LedgerService } from '../billing/ledger.service.js';
import type { RollupsService } from '../catalog/rollups/rollups.service.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { newId } from '../ids.js';
import type { KeysService } from '../keys/keys.service.js';
import type { Logger } from '../logger.js';
import { UsageCommitter, type CallRecord } from '../spend/usage-committer.js';
import { DEMO_APIS, type DemoApi, type DemoEndpoint } from './demo-apis.js';

export interface HistoryDeps {
  orm: MikroORM;
  config: Config;
  clock: Clock;
  logger: Logger;
  keys: Pick<KeysService, 'create'>;
  ledger: Pick<LedgerService, 'post'>;
  rollups: Pick<RollupsService, 'rollupUsage' | 'rollupScores' | 'rollupRanks'>;
}

export interface HistoryReport {
  from: string;
  until: string;
  calls: number;
  paid_calls: number;
  failed_calls: number;
  charged_cents: number;
  consumers: number;
}

const HOUR = 3_600_000;
const DAYS = 5;
/** What each sample consumer is granted (more than its share of the history spends). */
const CONSUMER_CREDIT_CENTS = 1_000;
const CONSUMERS = [
  { name: 'Sample consumer: travel app (demo)', weight: 0.4 },
  { name: 'Sample consumer: writing tool (demo)', weight: 0.3 },
  { name: 'Sample consumer: research agent (demo)', weight: 0.2 },
  { name: 'Sample consumer: hobby project (demo)', weight: 0.1 },
];
/** Values for templated paths, so the history's paths look like real calls. */
const PATH_VALUES: Record<string, readonly string[]> = {
  code: ['JP', 'FR', 'BR', 'IN', 'US', 'DE', 'KE', '404', '429', '503', '200', '301'],
};
/** Failed calls by the status the gateway records (0: no answer), and their share of failures. */
const FAILURES: readonly [number, number][] = [
  [400, 0.4],
  [404, 0.2],
  [429, 0.1],
  [500, 0.2],
  [502, 0.05],
  [0, 0.05],
];
const FAILURE_RATE = 0.025;

interface Listing {
  def: DemoApi;
  apiId: string;
  endpoints: { def: DemoEndpoint; id: string; priceCents: number }[];
}

interface Consumer {
  orgId: string;
  keyId: string;
  weight: number;
}

export async function seedHistory(deps: HistoryDeps, providerOrgId: string): Promise<HistoryReport | null> {
  const listings = await liveListings(deps.orm, providerOrgId);
  if (listings.length === 0) return null;
  const ids = listings.map((l) => l.apiId);
  const [seen] = await deps.orm.em
    .fork()
    .execute<{ n: string }[]>(
      `select count(*) as n from (select 1 from usage_events where api_id in (${ids.map(() => '?').join(',')}) limit 1) s`,
      ids,
    );
  if (Number(seen?.n ?? 0) > 0) return null;

  const consumers = await ensureConsumers(deps);
  const until = new Date(deps.clock.now().getTime() - 5 * 60_000);
  const from = new Date(Math.floor(until.getTime() / HOUR) * HOUR - DAYS * 24 * HOUR);
  const calls = planCalls(listings, consumers, providerOrgId, from, until);
  const committer = new UsageCommitter({
    orm: deps.orm,
    logger: deps.logger,
    feePercent: deps.config.billing.platformFeePercent,
  });
  await Promise.all(calls.map((c) => committer.commit(c)));
  await committer.flush();
  await refreshRollups(deps, from);
  const paid = calls.filter((c) => c.priceCents > 0);
  return {
    from: from.toISOString(),
    until: until.toISOString(),
    calls: calls.length,
    paid_calls: paid.length,
    failed_calls: calls.filter((c) => c.outcome === 'failed').length,
    charged_cents: paid.reduce((s, c) => s + c.priceCents, 0),
    consumers: consumers.length,
  };
}

/** The provider's live sample APIs with their endpoints' ids and prices. */
async function liveListings(orm: MikroORM, providerOrgId: string): Promise<Listing[]> {
  const rows = await orm.em
    .fork()
    .execute<
      { api_id: string; slug: string; endpoint_id: string; method: string; path: string; price_cents: string }[]
    >(
      `select a.id as api_id, a.slug, e.id as endpoint_id, e.method, e.path, e.price_cents
       from apis a join endpoints e on e.api_id = a.id
      where a.org_id = ? and a.status = 'live'`,
      [providerOrgId],
    );
  const listings: Listing[] = [];
  for (const def of DEMO_APIS) {
    const own = rows.filter((r) => r.slug === def.slug);
    const endpoints = def.endpoints.flatMap((e) => {
      const row = own.find((r) => r.method === e.method && r.path === e.path);
      return row ? [{ def: e, id: row.endpoint_id, priceCents: Number(row.price_cents) }] : [];
    });
    if (endpoints.length > 0) listings.push({ def, apiId: own[0]!.api_id, endpoints });
  }
  return listings;
}

/** The sample consumer orgs, each with a key and its credit (found again by the grant's idempotency key). */
async function ensureConsumers(deps: HistoryDeps): Promise<Consumer[]> {
  const out: Consumer[] = [];
  for (const [i, c] of CONSUMERS.entries()) {
    const grantKey = `demo-consumer:${i + 1}`;
    const em = deps.orm.em.fork();
    const [found] = await em.execute<{ org_id: string; key_id: string | null }[]>(
      `select l.org_id, (select k.id from api_keys k where k.org_id = l.org_id order by k.id limit 1) as key_id
         from ledger_entries l where l.kind = 'grant' and l.idempotency_key = ?`,
      [grantKey],
    );
    if (found?.key_id) {
      out.push({ orgId: found.org_id, keyId: found.key_id, weight: c.weight });
      continue;
    }
    const org = em.create(Org, { id: newId('org'), kind: 'standard', name: c.name });
    const { key } = deps.keys.create(em, {
      orgId: org.id,
      name: 'demo history',
      scopes: ['catalog:read', 'proxy:call'],
      source: 'api',
    });
    await em.flush();
    await deps.ledger.post({
      orgId: org.id,
      kind: 'grant',
      amountCents: CONSUMER_CREDIT_CENTS,
      idempotencyKey: grantKey,
      memo: 'demo: credit of a sample consumer of the sample APIs (npm start -- --demo)',
    });
    out.push({ orgId: org.id, keyId: key.id, weight: c.weight });
  }
  return out;
}

/** A small seeded generator (mulberry32): the same history shape on every first start. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function pick<T>(items: readonly T[], weight: (t: T) => number, r: number): T {
  const total = items.reduce((s, t) => s + weight(t), 0);
  let x = r * total;
  for (const t of items) if ((x -= weight(t)) < 0) return t;
  return items[items.length - 1]!;
}

/** More calls in the European and American working day, fewer at night (UTC). */
const diurnal = (hourOfDay: number): number => 0.35 + 1.3 * Math.max(0, Math.sin(((hourOfDay - 5) / 24) * 2 * Math.PI));

function planCalls(
  listings: Listing[],
  consumers: Consumer[],
  providerOrgId: string,
  from: Date,
  until: Date,
): CallRecord[] {
  const rnd = random(31);
  const calls: CallRecord[] = [];
  const span = until.getTime() - from.getTime();
  for (let hour = from.getTime(); hour < until.getTime(); hour += HOUR) {
    // Traffic grows over the days shown, as a listing finding its users would.
    const trend = 0.75 + (0.4 * (hour - from.getTime())) / span;
    for (const listing of listings) {
      const expected = (listing.def.dailyCalls / 24) * diurnal(new Date(hour).getUTCHours()) * trend;
      const count = Math.floor(expected + rnd());
      for (let i = 0; i < count; i++) {
        const at = new Date(Math.min(hour + Math.floor(rnd() * HOUR), until.getTime() - 1));
        calls.push(
          oneCall(
            listing,
            pick(consumers, (c) => c.weight, rnd()),
            providerOrgId,
            at,
            rnd,
          ),
        );
      }
    }
  }
  return calls.sort((a, b) => a.at.getTime() - b.at.getTime());
}

function oneCall(listing: Listing, consumer: Consumer, providerOrgId: string, at: Date, rnd: () => number): CallRecord {
  const endpoint = pick(listing.endpoints, (e) => e.def.weight, rnd());
  const failed = rnd() < FAILURE_RATE;
  const status = failed ? pick(FAILURES, ([, share]) => share, rnd())[0] : 200;
  // Log-normal around the endpoint's typical time, plus the gateway's own few milliseconds; no answer: the timeout.
  const normal = Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd());
  const latency = status === 0 ? 5_000 + rnd() * 200 : endpoint.def.latencyMs * Math.exp(0.35 * normal) + 2 + rnd() * 4;
  const path = endpoint.def.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const values = PATH_VALUES[name] ?? ['x'];
    return values[Math.floor(rnd() * values.length)]!;
  });
  return {
    usageId: newId('usage', at.getTime()),
    orgId: consumer.orgId,
    keyId: consumer.keyId,
    apiId: listing.apiId,
    apiSlug: listing.def.slug,
    endpointId: endpoint.id,
    providerOrgId,
    method: endpoint.def.method,
    path,
    status,
    outcome: failed ? 'failed' : 'success',
    priceCents: failed ? 0 : endpoint.priceCents,
    priceCentsEffective: endpoint.priceCents,
    latencyMs: Math.round(latency * 1000) / 1000,
    idempotencyKey: null,
    requestId: newId('request', at.getTime()),
    day: at.toISOString().slice(0, 10),
    at,
  };
}

/**
 * The rollups fold calls since their watermark: rewound to the history's start (and due a full refresh), then run
 * until caught up, so stats, scores and boards include the history now rather than at the next hourly refresh.
 */
async function refreshRollups(deps: HistoryDeps, from: Date): Promise<void> {
  await deps.orm.em
    .fork()
    .execute(`update rollup_state set watermark = least(watermark, ?), full_hour = null where name = 'usage'`, [from]);
  const now = deps.clock.now().getTime();
  for (let run = 0; run < 10; run++) {
    const report = await deps.rollups.rollupUsage();
    if (new Date(report.watermark).getTime() >= now - 60_000) break;
  }
  await deps.rollups.rollupScores();
  await deps.rollups.rollupRanks();
}
