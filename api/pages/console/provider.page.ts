/** Console · Provider. */
import type Router from '@koa/router';
import type { Services } from '../../../core/services.js';
import type { AppState } from '../../context.js';
import { consolePage, emptyState } from './shell.js';

export function providerConsole(services: Services, router: Router<AppState>): void {
  router.get(
    '/console/provider',
    consolePage(services, 'provider', async () => ({
      section: 'provider',
      title: 'Provider',
      body: emptyState('Nothing here yet.'),
    })),
  );
}
