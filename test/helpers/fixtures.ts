/**
 * Recurring set-ups of the integration tests, written straight through the services: a paid API listing (a provider
 * org of its own, endpoints and prices) and a consumer holding credits. Each test still says what it needs (prices,
 * credit) in its own file; only the wiring lives here.
 */
import { createApiApp } from '../../api/app.js';
import { createGatewayHandler, type GatewayHandler } from '../../gateway/app.js';
import type { RunningHttpServer } from '../../platform/runtime/http-server.js';
import type { Services } from '../../platform/services.js';
import { createPerson, type Person } from './accounts.js';
import { serve } from './http.js';
import { createLiveApi, type LiveApi } from './listings.js';
import { createTestStack, type TestStack } from './services.js';
import { startUpstream, type Upstream } from './upstream.js';

type ListingInput = Parameters<typeof createLiveApi>[1];

/** A live listing of a new provider org (or of `provider` when given), with its provider. */
export async function createPaidApi(
  services: Pick<Services, 'orm' | 'secrets' | 'keys' | 'sessions'>,
  input: Omit<ListingInput, 'providerOrgId'> & { provider?: Person },
): Promise<LiveApi & { provider: Person }> {
  const { provider: given, ...listing } = input;
  const provider = given ?? (await createPerson(services));
  return { ...(await createLiveApi(services, { ...listing, providerOrgId: provider.orgId })), provider };
}

/** A person of a new org (owner, every scope) whose org was granted `creditCents` on the ledger (none when 0). */
export async function createConsumer(
  services: Pick<Services, 'orm' | 'keys' | 'sessions' | 'ledger'>,
  creditCents: number,
  options: Parameters<typeof createPerson>[1] = {},
): Promise<Person> {
  const person = await createPerson(services, options);
  if (creditCents > 0) {
    await services.ledger.post({ orgId: person.orgId, kind: 'grant', amountCents: creditCents });
  }
  return person;
}

/** Closes each in the order given, one after the other, skipping the ones a failed set-up never made. */
export async function closeAll(...closables: ({ close: () => Promise<unknown> } | undefined)[]): Promise<void> {
  for (const closable of closables) await closable?.close();
}

/** The balance a new prepaid org without a card reads (GET /v1/billing/balance, the get_balance tool). */
export const NEW_ORG_BALANCE = {
  credit_cents: 0,
  billing_mode: 'prepaid',
  auto_reload_enabled: false,
  has_payment_method: false,
  suspended: false,
  billable_cents: 0,
};

/** A test stack serving the control plane (`api`) and the gateway (`gw`) on loopback, with a recording upstream. */
export interface ServedStack {
  stack: TestStack;
  upstream: Upstream;
  api: RunningHttpServer;
  gateway: GatewayHandler;
  gw: RunningHttpServer;
  /** Closes the gateway's server and handler, the control plane, the upstream and the stack, in that order. */
  close(): Promise<void>;
}

export async function startServedStack(options?: Parameters<typeof createTestStack>[0]): Promise<ServedStack> {
  const upstream = await startUpstream();
  const stack = await createTestStack(options);
  const gateway = createGatewayHandler(stack.services);
  const gw = await serve(gateway);
  const api = await serve(createApiApp(stack.services).callback());
  return { stack, upstream, api, gateway, gw, close: () => closeAll(gw, gateway, api, upstream, stack) };
}
