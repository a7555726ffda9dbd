/** Types and ids of priceChangeWorkflow (mirrors core/temporal/contracts.ts). */
export interface PriceChangeInput {
  apiId: string;
  endpointId: string;
  priceCents: number;
  effectiveAt: string;
}

export interface PriceChangeResult {
  applied: boolean;
}

export const priceChangeWorkflowId = (apiId: string, endpointId: string): string => `price:${apiId}:${endpointId}`;
