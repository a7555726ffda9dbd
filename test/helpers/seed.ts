/**
 * Seeding the database that real processes (processes.ts) serve: services opened on it for the set-up and closed
 * after, and the keys with budgets of their own that the load tests spend through.
 */
import { SCOPES } from '../../core/auth/scopes.js';
import type { Services } from '../../platform/services.js';
import type { Person } from './accounts.js';
import { createConsumer, createPaidApi } from './fixtures.js';
import { createTestStack } from './services.js';

/** Runs `seed` with services on the database at `databaseUrl` (left in place), closing them after. */
export async function seedDatabase<T>(databaseUrl: string, seed: (services: Services) => Promise<T>): Promise<T> {
  const stack = await createTestStack({ db: { name: 'external', url: databaseUrl, drop: () => Promise.resolve() } });
  try {
    return await seed(stack.services);
  } finally {
    await stack.close();
  }
}

/** API keys of the org (every scope), one per name with that budget in cents; their plaintexts by name. */
export async function createBudgetKeys<N extends string>(
  services: Pick<Services, 'orm' | 'keys'>,
  orgId: string,
  budgets: Record<N, number>,
): Promise<Record<N, string>> {
  const em = services.orm.em.fork();
  const made = Object.entries<number>(budgets).map(([name, budgetCents]) => {
    const key = services.keys.create(em, { orgId, name, scopes: SCOPES, source: 'api', budgetCents });
    return [name, key.plaintext] as const;
  });
  await em.flush();
  return Object.fromEntries(made) as Record<N, string>;
}

export interface SeededListing {
  provider: Person;
  slug: string;
  consumer: Person;
  /** The consumer's extra keys (`keys`' names), plaintexts by name. */
  keys: Record<string, string>;
}

/**
 * In the database at `databaseUrl`: a provider's live listing (`GET /paid` at `priceCents`, behind `baseUrl`) and a
 * consumer holding `credit` cents, with extra keys of the budgets `keys` names.
 */
export function seedPaidListing(
  databaseUrl: string,
  options: { baseUrl: string; priceCents: number; credit: number; keys?: Record<string, number> },
): Promise<SeededListing> {
  return seedDatabase(databaseUrl, async (services) => {
    const live = await createPaidApi(services, {
      baseUrl: options.baseUrl,
      endpoints: [{ method: 'GET', path: '/paid', priceCents: options.priceCents }],
    });
    const consumer = await createConsumer(services, options.credit);
    const keys = await createBudgetKeys(services, consumer.orgId, options.keys ?? {});
    return { provider: live.provider, slug: live.slug, consumer, keys };
  });
}
