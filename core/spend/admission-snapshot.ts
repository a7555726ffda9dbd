/**
 * Reads what the gateway's fast state is rebuilt from: the org's balance (with its version), and a key's spend (in all
 * and on the day) with each ancestor's (a key's spend counts its child keys' calls: usage-committer.ts books both). The
 * quote (GET /v1/apis/{slug}/quote) reads the same snapshot to decide admission from Postgres alone.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../config.js';
import type { KeySnapshot, OrgSnapshot } from './spend-store.js';

export interface Snapshot {
  orgId: string;
  org: OrgSnapshot;
  keyId?: string;
  day?: string;
  key?: KeySnapshot;
  ancestors?: { keyId: string; spentCents: number; daySpentCents: number }[];
}

export async function loadSnapshot(
  deps: { orm: MikroORM; config: Config },
  orgId: string,
  keyId?: string,
  day?: string,
  ancestorKeyIds: readonly string[] = [],
): Promise<Snapshot> {
  const em = deps.orm.em.fork();
  const [org] = await em.execute<
    {
      credit_cents: string;
      balance_version: string;
      billing_mode: 'prepaid' | 'card';
      suspended: boolean;
      credit_limit_cents: string;
    }[]
  >(
    `select credit_cents, balance_version, billing_mode, suspended, coalesce(credit_limit_cents, ?) as credit_limit_cents
       from orgs where id = ?`,
    [deps.config.billing.cardCreditLimitCents, orgId],
  );
  if (!org) throw new Error(`org ${orgId} not found`);
  const snapshot: Snapshot = {
    orgId,
    org: {
      creditCents: Number(org.credit_cents),
      balanceVersion: Number(org.balance_version),
      billingMode: org.billing_mode,
      suspended: org.suspended,
      creditLimitCents: Number(org.credit_limit_cents),
    },
  };
  if (keyId !== undefined && day !== undefined) {
    const [key] = await em.execute<{ spent_cents: string; day_cents: string | null }[]>(
      `select k.spent_cents, case when k.spent_day = ? then k.day_spent_cents else 0 end as day_cents from api_keys k
        where k.id = ?`,
      [day, keyId],
    );
    snapshot.keyId = keyId;
    snapshot.day = day;
    snapshot.key = { spentCents: Number(key?.spent_cents ?? 0), daySpentCents: Number(key?.day_cents ?? 0) };
    if (ancestorKeyIds.length > 0) {
      const rows = await em.execute<{ id: string; spent_cents: string; day_cents: string | null }[]>(
        `select k.id, k.spent_cents, case when k.spent_day = ? then k.day_spent_cents else 0 end as day_cents
           from api_keys k
          where k.id in (${ancestorKeyIds.map(() => '?').join(',')})`,
        [day, ...ancestorKeyIds],
      );
      const found = new Map(rows.map((r) => [r.id, r]));
      snapshot.ancestors = ancestorKeyIds.map((id) => ({
        keyId: id,
        spentCents: Number(found.get(id)?.spent_cents ?? 0),
        daySpentCents: Number(found.get(id)?.day_cents ?? 0),
      }));
    }
  }
  return snapshot;
}
