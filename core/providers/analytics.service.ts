/**
 * Provider analytics (GET /v1/provider/analytics): calls and GMV of the provider's APIs from the usage events, and
 * earnings, platform fees and payouts from the provider's ledger rows, over a time range. On the provider's books a
 * paid call is a `provider_earning` row (the gross price) and a negative `platform_fee` row; payouts are negative
 * `payout` rows. `earnings_to_date` is the all-time story (earnings-to-date.ts): where the net goes, pending,
 * available and paid out.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { z } from 'zod';
import type { Principal } from '../auth/scopes.js';
import type { DemandService } from '../demand/demand.service.js';
import type { UpstreamGuard } from '../upstream/upstream-guard.js';
import { upstreamProblem } from '../upstream/upstream-problem.js';
import { UsageQuery, type UsageService } from '../usage/usage.service.js';
import type { AnalyticsView } from './providers.schemas.js';
import { earningsToDate } from './earnings-to-date.js';

/** `from` and `to` (ISO date or instant; default: the last 30 days), as for usage. */
export const AnalyticsQuery = UsageQuery.pick({ from: true, to: true }).strict();
export type AnalyticsQuery = z.infer<typeof AnalyticsQuery>;

export type { AnalyticsView } from './providers.schemas.js';

export class AnalyticsService {
  constructor(
    private readonly deps: {
      orm: MikroORM;
      usage: UsageService;
      demand: DemandService;
      guard: UpstreamGuard;
      payoutMinimumCents: number;
    },
  ) {}

  async provider(principal: Principal, query: AnalyticsQuery): Promise<AnalyticsView> {
    const { from, to } = this.deps.usage.resolveRange(query);
    const em = this.deps.orm.em.fork();
    // Per API of the org, a range scan of usage_events_api_created_idx (test/integration/providers/public-read-costs.test.ts).
    const byApi = await em.execute<
      { api_id: string; slug: string; base_url: string; calls: string; ok: string; gmv: string }[]
    >(
      `select a.id as api_id, a.slug, a.base_url, count(u.id) as calls,
              count(u.id) filter (where u.outcome = 'success') as ok,
              coalesce(sum(u.cost_cents) filter (where u.outcome = 'success'), 0) as gmv
         from apis a
         left join usage_events u on u.api_id = a.id and u.created_at >= ? and u.created_at < ?
        where a.org_id = ?
        group by a.id, a.slug, a.base_url
        order by gmv desc, a.slug asc`,
      [from, to, principal.orgId],
    );
    const [ledger] = await em.execute<{ earnings: string; fees: string; payouts: string }[]>(
      `select coalesce(sum(amount_cents) filter (where kind = 'provider_earning'), 0) as earnings,
              coalesce(sum(-amount_cents) filter (where kind = 'platform_fee'), 0) as fees,
              coalesce(sum(-amount_cents) filter (where kind = 'payout'), 0) as payouts
         from ledger_entries where org_id = ? and created_at >= ? and created_at < ?`,
      [principal.orgId, from, to],
    );
    // Each upstream under the address policy the gateway applies (issue 31): the lookups run side by side.
    const problems = await Promise.all(byApi.map((r) => upstreamProblem(this.deps.guard, r.base_url)));
    const rows = byApi.map((r, i) => ({
      api_id: r.api_id,
      slug: r.slug,
      calls: Number(r.calls),
      successful_calls: Number(r.ok),
      gmv_cents: Number(r.gmv),
      upstream_problem: problems[i]!,
    }));
    return {
      range: { from: from.toISOString(), to: to.toISOString() },
      totals: {
        calls: rows.reduce((s, r) => s + r.calls, 0),
        successful_calls: rows.reduce((s, r) => s + r.successful_calls, 0),
        gmv_cents: rows.reduce((s, r) => s + r.gmv_cents, 0),
        provider_earnings_cents: Number(ledger?.earnings ?? 0),
        platform_fee_cents: Number(ledger?.fees ?? 0),
        net_earnings_cents: Number(ledger?.earnings ?? 0) - Number(ledger?.fees ?? 0),
        payouts_cents: Number(ledger?.payouts ?? 0),
      },
      by_api: rows,
      earnings_to_date: await earningsToDate(em, principal.orgId, this.deps.payoutMinimumCents),
      open_api_requests: await this.deps.demand.topOpen(10),
    };
  }
}
