/** The scheduled books check (Temporal Schedule `reconcile-books`): one activity; drift is logged and returned. */
import { proxyActivities } from '@temporalio/workflow';
import type { BillingActivities, ReconciliationReport } from '../activities/billing.activities.js';

const { reconcileBooks } = proxyActivities<BillingActivities>({
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '10 seconds', maximumAttempts: 3 },
});

export async function reconcileBooksWorkflow(): Promise<ReconciliationReport> {
  return reconcileBooks();
}
