/** An endpoint as its provider sees it: method, path, schemas, the list price and what a call costs today. */
import type { IEndpoint } from '../../db/entities/index.js';
import { effectivePrice } from './effective-price.js';
import type { EndpointView, RemovalView } from './pricing.schemas.js';

export type { EndpointView } from './pricing.schemas.js';

/** An endpoint's announced removal (announcement and sunset instants), or null. */
export function removalOf(e: Pick<IEndpoint, 'removalAnnouncedAt' | 'sunsetAt'>): RemovalView | null {
  return e.removalAnnouncedAt && e.sunsetAt
    ? { announced_at: e.removalAnnouncedAt.toISOString(), sunset_at: e.sunsetAt.toISOString() }
    : null;
}

/** What every view of an endpoint starts with: its id, method, path, summary and any announced removal. */
export function endpointHead(
  e: IEndpoint,
): Pick<EndpointView, 'endpoint_id' | 'method' | 'path' | 'summary' | 'removal'> {
  return { endpoint_id: e.id, method: e.method, path: e.path, summary: e.summary ?? null, removal: removalOf(e) };
}

export function endpointView(e: IEndpoint, now: Date): EndpointView {
  const price = effectivePrice(e, now);
  return {
    ...endpointHead(e),
    operation_id: e.operationId ?? null,
    price_cents: price.price_cents,
    price_cents_effective: price.price_cents_effective,
    price_increase: price.price_increase,
    discount: price.discount ?? e.discount ?? null,
    input_schema: e.inputSchema ?? null,
    output_schema: e.outputSchema ?? null,
  };
}
