/** Console · Overview. */
import type Router from '@koa/router';
import type { Services } from '../../../core/services.js';
import type { AppState } from '../../context.js';
import { consolePage, emptyState } from './shell.js';

export function overviewConsole(services: Services, router: Router<AppState>): void {
  router.get(
    '/console',
    consolePage(services, 'overview', async () => ({
      section: 'overview',
      title: 'Overview',
      body: emptyState('Nothing here yet.'),
    })),
  );
}
