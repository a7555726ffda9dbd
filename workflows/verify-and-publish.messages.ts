/** Payload types and ids of verifyAndPublishWorkflow (the types are defined once, in core/temporal/contracts.ts). */
export type {
  PublishAction,
  PublishInput,
  PublishResult,
  VerificationResult,
} from '../activities/providers.activities.js';

export const publishWorkflowId = (apiId: string): string => `publish:${apiId}`;
