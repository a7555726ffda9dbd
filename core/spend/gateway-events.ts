/**
 * What the gateway caches, and how writers elsewhere tell it that a cached thing changed. Each gateway process keeps
 * an org's fast state (balance, billing mode, suspension: SpendStore) and each live listing (endpoints, prices,
 * discounts, credential: gateway/catalog-cache.ts) for a few seconds; a writer that changes one of them publishes the
 * org id or the listing's slug on the counter store's pub/sub (Redis in production), after its transaction commits,
 * and every gateway drops its copy, so the next call reads Postgres. Publishing never fails the writer: the change is
 * already committed, and a lost message only means the gateway sees it at its own refresh (5 s for the fast state,
 * 5-10 s for a listing).
 */
import type { CounterStore, Unsubscribe } from '../counters/index.js';
import type { Logger } from '../logger.js';
import type { SpendStore } from './spend-store.js';

export const GATEWAY_CHANNELS = {
  /** Message: an org id. Its suspension, billing mode or balance changed outside the gateway's own calls. */
  org: 'gateway:org-changed',
  /** Message: a listing's slug. Its status, endpoints, prices, discounts or upstream settings changed. */
  listing: 'gateway:listing-changed',
} as const;

export class GatewayEvents {
  constructor(
    private readonly counters: Pick<CounterStore, 'publish'>,
    private readonly logger: Logger,
    /** The gateways' shared fast state: an org change is written there too, not only announced (issue 21, item 12). */
    private readonly spend?: Pick<SpendStore, 'forgetOrg'>,
  ) {}

  /**
   * Call after the transaction that changed the org committed. The org's fast state is forgotten in the shared store
   * first, so the next admission on any gateway reads Postgres (suspension, billing mode, credit limit) even when the
   * message below is lost; the message then drops what a gateway keeps in process.
   */
  async orgChanged(orgId: string): Promise<void> {
    await this.spend?.forgetOrg(orgId).catch((err: unknown) => {
      this.logger.warn({ err: (err as Error).message, org_id: orgId }, 'could not forget the org in the shared state');
    });
    await this.send(GATEWAY_CHANNELS.org, orgId);
  }

  /** Call after the transaction that changed the listing committed. */
  async listingChanged(slug: string): Promise<void> {
    await this.send(GATEWAY_CHANNELS.listing, slug);
  }

  private async send(channel: string, message: string): Promise<void> {
    try {
      await this.counters.publish(channel, message);
    } catch (err) {
      this.logger.warn(
        { err: (err as Error).message, channel, subject: message },
        'could not tell the gateways about a change; they will see it at their next refresh',
      );
    }
  }
}

export interface GatewayEventHandlers {
  orgChanged(orgId: string): void;
  listingChanged(slug: string): void;
}

/** Subscribe a gateway process to both channels. */
export async function subscribeGatewayEvents(
  counters: Pick<CounterStore, 'subscribe'>,
  handlers: GatewayEventHandlers,
): Promise<Unsubscribe> {
  const off = await Promise.all([
    counters.subscribe(GATEWAY_CHANNELS.org, (orgId) => handlers.orgChanged(orgId)),
    counters.subscribe(GATEWAY_CHANNELS.listing, (slug) => handlers.listingChanged(slug)),
  ]);
  return async () => {
    await Promise.all(off.map((unsubscribe) => unsubscribe()));
  };
}
