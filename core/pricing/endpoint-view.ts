/** An endpoint as its provider sees it: method, path, schemas, the list price and what a call costs today. */
import type { Discount, IEndpoint } from '../../db/entities/index.js';
import { effectivePrice, type EffectivePrice } from './effective-price.js';

export interface EndpointView {
  endpoint_id: string;
  method: string;
  path: string;
  summary: string | null;
  operation_id: string | null;
  price_cents: number;
  price_cents_effective: number;
  price_increase: EffectivePrice['price_increase'];
  discount: EffectivePrice['discount'] | Discount | null;
  input_schema: Record<string, unknown> | null;
  output_schema: Record<string, unknown> | null;
}

/** What every view of an endpoint starts with: its id, method, path and summary. */
export function endpointHead(e: IEndpoint): Pick<EndpointView, 'endpoint_id' | 'method' | 'path' | 'summary'> {
  return { endpoint_id: e.id, method: e.method, path: e.path, summary: e.summary ?? null };
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
