/** Types and ids of verifyAndPublishWorkflow (mirrors core/temporal/contracts.ts; a test checks the names). */
export type PublishAction = 'verify' | 'publish' | 'unpublish';

export interface PublishInput {
  apiId: string;
  action: PublishAction;
  skipVerify: boolean;
}

export interface VerificationResult {
  checked_at: string;
  passed: boolean;
  checks: {
    endpoint_id: string;
    method: string;
    path: string;
    status: number | null;
    latency_ms: number | null;
    ok: boolean;
    error: string | null;
  }[];
}

export interface PublishResult {
  action: PublishAction;
  status: 'draft' | 'live';
  verification: VerificationResult | null;
}

export const publishWorkflowId = (apiId: string): string => `publish:${apiId}`;
