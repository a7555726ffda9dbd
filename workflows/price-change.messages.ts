/** Payload types and ids of priceChangeWorkflow (the types are defined once, in core/temporal/contracts.ts). */
export type { PriceChangeInput, PriceChangeResult } from '../activities/providers.activities.js';

export const priceChangeWorkflowId = (apiId: string, endpointId: string): string => `price:${apiId}:${endpointId}`;
