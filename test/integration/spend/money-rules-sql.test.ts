// The one-statement group commit computes two money rules inside Postgres, and the Redis settle script the charge's
// split: each SQL or Lua twin must agree with its TypeScript rule (core/money/money-rules.ts) over random values.
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { seededRandom as random } from '../../helpers/random.js';
import {
  CHARGE_CALL_LUA,
  chargeCall,
  creditAppliedSql,
  crossesReloadThreshold,
  crossesReloadThresholdSql,
} from '../../../core/money/money-rules.js';
import { sql } from '../../helpers/db.js';
import { PG_ADMIN_URL, REDIS_URL } from '../../helpers/env.js';

describe('money rules in SQL', () => {
  it('credit applied and the auto-reload crossing agree with the TypeScript rules', async () => {
    const next = random(3);
    const cases = Array.from({ length: 5_000 }, (_, i) => {
      const price = next(10_000);
      return {
        i,
        price,
        // The one-statement path charges the full price: a prepaid org always has the credit there.
        before: next(3) === 0 ? price + next(10_000) : next(20_000) - 5_000,
        mode: next(2) === 0 ? 'prepaid' : 'card',
        enabled: next(4) !== 0,
        threshold: next(3) === 0 ? null : next(10_000),
      };
    });
    const rows = await sql<{ i: number; credit: string; crossed: boolean }>(
      PG_ADMIN_URL,
      `select c.i, ${creditAppliedSql('c.price', 'c.before')} as credit,
              ${crossesReloadThresholdSql('c.enabled', 'c.threshold', 'c.before', 'c.before - c.price')} as crossed
         from jsonb_to_recordset($1::jsonb) as c(i int, price bigint, before bigint, enabled boolean, threshold bigint)
        order by c.i`,
      [JSON.stringify(cases)],
    );
    expect(rows).toHaveLength(cases.length);
    for (const c of cases) {
      const row = rows[c.i]!;
      const charge = chargeCall(c.price, c.before, 'card');
      if (c.mode === 'prepaid' && c.before < c.price) continue; // never reaches the one-statement path
      expect(Number(row.credit)).toBe(charge.creditAppliedCents);
      expect(row.crossed).toBe(crossesReloadThreshold(c.enabled, c.threshold, c.before, c.before - c.price));
    }
  });
});

describe('money rules in Lua', () => {
  it("the settle script's charge split agrees with chargeCall on a real Redis", async () => {
    const next = random(7);
    const cases = Array.from({ length: 2_000 }, () => ({
      price: next(10_000),
      balance: next(30_000) - 10_000,
      mode: next(2) === 0 ? 'prepaid' : 'card',
    }));
    const redis = new Redis(REDIS_URL);
    try {
      const flat = cases.flatMap((c) => [c.price, c.balance, c.mode]);
      const lua = `${CHARGE_CALL_LUA}
local out = {}
for i = 1, #ARGV, 3 do
  local applied, billable = chargeCall(tonumber(ARGV[i]), tonumber(ARGV[i + 1]), ARGV[i + 2])
  out[#out + 1] = applied .. ',' .. billable
end
return out`;
      const got = (await redis.eval(lua, 0, ...flat)) as string[];
      cases.forEach((c, i) => {
        const want = chargeCall(c.price, c.balance, c.mode as 'prepaid' | 'card');
        expect(got[i], JSON.stringify(c)).toBe(`${want.creditAppliedCents},${want.billableCents}`);
      });
    } finally {
      redis.disconnect();
    }
  });
});
