// core/temporal/contracts.ts mirrors the names workflows/ defines (core never imports workflows/): keep them equal.
import { describe, expect, it } from 'vitest';
import { QUERIES, SIGNALS, WORKFLOW_TYPES, workflowIds } from '../../core/temporal/contracts.js';
import * as workflows from '../../workflows/index.js';
import {
  emailVerifiedSignal,
  signupCreditsStatusQuery,
  signupCreditsWorkflowId,
} from '../../workflows/signup-credits.messages.js';

describe('workflow contracts', () => {
  it('every workflow type the control plane starts is exported by workflows/', () => {
    for (const name of Object.values(WORKFLOW_TYPES)) {
      expect(typeof (workflows as Record<string, unknown>)[name], name).toBe('function');
    }
  });

  it('signal, query and id helpers agree', () => {
    expect(emailVerifiedSignal.name).toBe(SIGNALS.emailVerified);
    expect(signupCreditsStatusQuery.name).toBe(QUERIES.signupCreditsStatus);
    expect(signupCreditsWorkflowId('org_x')).toBe(workflowIds.signupCredits('org_x'));
  });
});
