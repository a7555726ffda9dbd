/** Console · Keys. */
import type Router from '@koa/router';
import type { Services } from '../../../core/services.js';
import type { AppState } from '../../context.js';
import { consolePage, emptyState } from './shell.js';

export function keysConsole(services: Services, router: Router<AppState>): void {
  router.get(
    '/console/keys',
    consolePage(services, 'keys', async () => ({
      section: 'keys',
      title: 'Keys',
      body: emptyState('Nothing here yet.'),
    })),
  );
}
