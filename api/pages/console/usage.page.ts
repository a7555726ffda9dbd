/** Console · Usage. */
import type Router from '@koa/router';
import type { Services } from '../../../core/services.js';
import type { AppState } from '../../context.js';
import { consolePage, emptyState } from './shell.js';

export function usageConsole(services: Services, router: Router<AppState>): void {
  router.get(
    '/console/usage',
    consolePage(services, 'usage', async () => ({
      section: 'usage',
      title: 'Usage',
      body: emptyState('Nothing here yet.'),
    })),
  );
}
