// core/temporal/contracts.ts mirrors the names workflows/ defines (core never imports workflows/): keep them equal.
import { describe, expect, it } from 'vitest';
import { QUERIES, SIGNALS, WORKFLOW_TYPES, workflowIds } from '../../core/temporal/contracts.js';
import * as workflows from '../../workflows/index.js';
import {
  emailVerifiedSignal,
  signupCreditsStatusQuery,
  signupCreditsWorkflowId,
} from '../../workflows/signup-credits.messages.js';
import { accountUpdatedSignal, connectWorkflowId } from '../../workflows/connect-onboarding.messages.js';
import {
  autoReloadWorkflowId,
  paymentSettledSignal,
  reloadRequestedSignal,
} from '../../workflows/auto-reload.messages.js';
import { priceChangeWorkflowId } from '../../workflows/price-change.messages.js';
import { usageChargeWorkflowId } from '../../workflows/billing-cycle.messages.js';
import { publishWorkflowId } from '../../workflows/verify-and-publish.messages.js';
import { endpointRemovalWorkflowId } from '../../workflows/endpoint-removal.messages.js';

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
    expect(accountUpdatedSignal.name).toBe(SIGNALS.accountUpdated);
    expect(connectWorkflowId('org_x')).toBe(workflowIds.connect('org_x'));
    expect(priceChangeWorkflowId('api_x', 'ep_y')).toBe(workflowIds.priceChange('api_x', 'ep_y'));
    expect(publishWorkflowId('api_x')).toBe(workflowIds.publish('api_x'));
    expect(endpointRemovalWorkflowId('api_x', 'ep_y')).toBe(workflowIds.endpointRemoval('api_x', 'ep_y'));
    expect(paymentSettledSignal.name).toBe(SIGNALS.paymentSettled);
    expect(reloadRequestedSignal.name).toBe(SIGNALS.reloadRequested);
    expect(autoReloadWorkflowId('org_x')).toBe(workflowIds.autoReload('org_x'));
    expect(usageChargeWorkflowId('org_x')).toBe(workflowIds.usageCharge('org_x'));
  });
});
