/** Console · Billing. */
import type Router from '@koa/router';
import type { Services } from '../../../core/services.js';
import type { AppState } from '../../context.js';
import { consolePage, emptyState } from './shell.js';

export function billingConsole(services: Services, router: Router<AppState>): void {
  router.get(
    '/console/billing',
    consolePage(services, 'billing', async () => ({
      section: 'billing',
      title: 'Billing',
      body: emptyState('Nothing here yet.'),
    })),
  );
}
