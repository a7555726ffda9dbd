/**
 * The metered proxy on a test stack: a recording loopback upstream, the gateway handler on a random port and a paid
 * API behind it, with the reads the money tests make after calls (the org's balance and its booked calls, each after
 * the usage drain has flushed). The books check stays in each test file (`expectReconciled` of books.ts).
 */
import { afterAll, beforeAll } from 'vitest';
import { createGatewayHandler, type GatewayHandler } from '../../gateway/app.js';
import type { Services } from '../../platform/services.js';
import type { RunningHttpServer } from '../../platform/runtime/http-server.js';
import type { Person } from './accounts.js';
import { sql } from './db.js';
import { createConsumer } from './fixtures.js';
import { serve } from './http.js';
import type { LiveApi } from './listings.js';
import type { TestStack } from './services.js';
import type { Upstream } from './upstream.js';
import { startListedStack, type ListedStackOptions } from './listed-stack.js';

export interface GatewayStack {
  stack: TestStack;
  gateway: GatewayHandler;
  server: RunningHttpServer;
  upstream: Upstream;
  provider: Person;
  api: LiveApi;
  /** A new org holding `credit` cents. */
  consumer: (credit: number) => Promise<Person>;
  /** The org's `credit_cents` in Postgres once the calls answered so far are booked. */
  balance: (orgId: string) => Promise<number>;
  /** The paid calls booked for the org (its usage batches' calls), checking their debits add up to what they charged. */
  debits: (orgId: string) => Promise<number>;
  close: () => Promise<void>;
}

export async function startGatewayStack(options: ListedStackOptions): Promise<GatewayStack> {
  const listed = await startListedStack(options);
  const { stack, upstream, api } = listed;
  const gateway = createGatewayHandler(stack.services);
  const server = await serve(gateway);
  const booked = async <T extends Record<string, unknown>>(query: string, orgId: string): Promise<T> => {
    await gateway.drain.flush();
    const [row] = await sql<T>(stack.db.url, query, [orgId]);
    return row!;
  };
  return {
    stack,
    gateway,
    server,
    upstream,
    provider: api.provider,
    api,
    consumer: (credit) => createConsumer(stack.services, credit),
    balance: async (orgId) =>
      Number(
        (await booked<{ credit_cents: string }>('select credit_cents from orgs where id = $1', orgId)).credit_cents,
      ),
    debits: async (orgId) => {
      const row = await booked<{ calls: number; charged: number; debited: number }>(BOOKED_CALLS_SQL, orgId);
      if (row.debited !== row.charged) throw new Error(`debited ${row.debited} for batches charging ${row.charged}`);
      return row.calls;
    },
    close: async () => {
      await server.close();
      await gateway.close();
      await listed.close();
    },
  };
}

const BOOKED_CALLS_SQL = `select coalesce(sum(calls), 0)::int as calls, coalesce(sum(charged_cents), 0)::int as charged,
       (select coalesce(-sum(amount_cents), 0)::int from ledger_entries where org_id = $1 and kind = 'usage') as debited
  from usage_batches where org_id = $1`;

/**
 * A listing with templated paths and a paid order (`/items/{id}`, `/items/{id}/parts/{part}` at 1 cent, `POST /orders`
 * at 5) behind `/api/v2` with a header credential, on a gateway whose card-billed orgs may owe 12 cents.
 */
export const ORDERS_API = {
  basePath: '/api/v2',
  credential: { secret: 'provider-secret', injection: 'header', name: 'X-Api-Key' },
  endpoints: [
    { method: 'GET', path: '/items/{id}', priceCents: 1 },
    { method: 'GET', path: '/items/{id}/parts/{part}', priceCents: 1 },
    { method: 'POST', path: '/orders', priceCents: 5 },
  ],
  env: { GATEWAY_RATE_LIMIT_PER_MIN: '100000', CARD_CREDIT_LIMIT_CENTS: '12', GATEWAY_DRAIN_CLAIM_IDLE_MS: '200' },
} satisfies Parameters<typeof startGatewayStack>[0];

/**
 * Starts a gateway stack before the enclosing suite's tests and closes it after them, running the file's books
 * check (`expectReconciled` of books.ts, say) first. The value returned reads through to the running stack. Options
 * given as a function are read when the stack starts (after the suite's earlier `beforeAll` hooks).
 */
export function useGatewayStack(
  options: ListedStackOptions | (() => ListedStackOptions),
  checkBooks: (services: Services) => Promise<void>,
): GatewayStack {
  let running: GatewayStack | undefined;
  beforeAll(async () => {
    running = await startGatewayStack(typeof options === 'function' ? options() : options);
  });
  afterAll(async () => {
    if (!running) return;
    await checkBooks(running.stack.services);
    await running.close();
  });
  return new Proxy({} as GatewayStack, {
    get: (_target, name: keyof GatewayStack) => {
      if (!running) throw new Error('the gateway stack is not started (used outside a test?)');
      return running[name];
    },
  });
}
