/** Every workflow the worker registers (the bundle's entry point). */
export { autoReloadWorkflow } from './auto-reload.workflow.js';
export { billingCycleWorkflow } from './billing-cycle.workflow.js';
export { catalogRollupsWorkflow } from './catalog-rollups.workflow.js';
export { connectOnboardingWorkflow } from './connect-onboarding.workflow.js';
export { demandEmailCleanupWorkflow } from './demand-email-cleanup.workflow.js';
export { endpointRemovalWorkflow } from './endpoint-removal.workflow.js';
export { priceChangeWorkflow } from './price-change.workflow.js';
export { reconcileBooksWorkflow } from './reconcile-books.workflow.js';
export { signupCreditsWorkflow } from './signup-credits.workflow.js';
export { usageChargeWorkflow } from './usage-charge.workflow.js';
export { usagePartitionsWorkflow } from './usage-partitions.workflow.js';
export { verifyAndPublishWorkflow } from './verify-and-publish.workflow.js';
