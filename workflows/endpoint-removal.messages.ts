/** Payload types and ids of endpointRemovalWorkflow (the types are defined once, in core/temporal/contracts.ts). */
export type { EndpointRemovalInput, EndpointRemovalResult } from '../activities/providers.activities.js';

export const endpointRemovalWorkflowId = (apiId: string, endpointId: string): string =>
  `removal:${apiId}:${endpointId}`;
