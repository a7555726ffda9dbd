/**
 * Reads the web console's Provider section needs and no route exposes (read-only, org-scoped): where the org's
 * Connect onboarding stands, and its APIs' activity per UTC day over a range (calls, GMV from the usage events;
 * platform fees and payouts from its ledger rows, signed as GET /v1/provider/analytics reports them) for the charts.
 */
import type { MikroORM } from '@mikro-orm/postgresql';

export interface ProviderDay {
  /** `YYYY-MM-DD` (UTC). */
  day: string;
  calls: number;
  successful_calls: number;
  gmv_cents: number;
  platform_fee_cents: number;
  payouts_cents: number;
}

export interface ConnectState {
  /** `none` (never started), `pending` (account created, onboarding not finished) or `enabled`. */
  status: string;
  has_account: boolean;
}

const DAY_MS = 86_400_000;

const dayOf = (d: Date) => d.toISOString().slice(0, 10);

/** Every UTC day the range touches, oldest first. */
export function daysOf(from: Date, to: Date): string[] {
  const out: string[] = [];
  const last = dayOf(new Date(to.getTime() - 1));
  for (let t = Date.parse(`${dayOf(from)}T00:00:00Z`); ; t += DAY_MS) {
    const day = dayOf(new Date(t));
    out.push(day);
    if (day >= last) return out;
  }
}

export async function providerDaily(orm: MikroORM, orgId: string, from: Date, to: Date): Promise<ProviderDay[]> {
  const em = orm.em.fork();
  const usage = await em.execute<{ day: string; calls: string; ok: string; gmv: string }[]>(
    `select to_char(u.created_at at time zone 'UTC', 'YYYY-MM-DD') as day, count(*) as calls,
            count(*) filter (where u.outcome = 'success') as ok,
            coalesce(sum(u.cost_cents) filter (where u.outcome = 'success'), 0) as gmv
       from apis a join usage_events u on u.api_id = a.id and u.created_at >= ? and u.created_at < ?
      where a.org_id = ?
      group by 1`,
    [from, to, orgId],
  );
  const ledger = await em.execute<{ day: string; fees: string; payouts: string }[]>(
    `select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD') as day,
            coalesce(sum(-amount_cents) filter (where kind = 'platform_fee'), 0) as fees,
            coalesce(sum(-amount_cents) filter (where kind = 'payout'), 0) as payouts
       from ledger_entries where org_id = ? and created_at >= ? and created_at < ?
      group by 1`,
    [orgId, from, to],
  );
  const byDay = new Map(usage.map((r) => [r.day, r]));
  const moneyByDay = new Map(ledger.map((r) => [r.day, r]));
  return daysOf(from, to).map((day) => {
    const u = byDay.get(day);
    const m = moneyByDay.get(day);
    return {
      day,
      calls: Number(u?.calls ?? 0),
      successful_calls: Number(u?.ok ?? 0),
      gmv_cents: Number(u?.gmv ?? 0),
      platform_fee_cents: Number(m?.fees ?? 0),
      payouts_cents: Number(m?.payouts ?? 0),
    };
  });
}

export async function connectStateOf(orm: MikroORM, orgId: string): Promise<ConnectState> {
  const [row] = await orm.em
    .fork()
    .execute<{ connect_status: string; has_account: boolean }[]>(
      'select connect_status, stripe_account_id is not null as has_account from orgs where id = ?',
      [orgId],
    );
  return { status: row?.connect_status ?? 'none', has_account: Boolean(row?.has_account) };
}
