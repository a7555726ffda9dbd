/** Console · Catalog. */
import type Router from '@koa/router';
import type { Services } from '../../../core/services.js';
import type { AppState } from '../../context.js';
import { consolePage, emptyState } from './shell.js';

export function catalogConsole(services: Services, router: Router<AppState>): void {
  router.get(
    '/console/catalog',
    consolePage(services, 'catalog', async () => ({
      section: 'catalog',
      title: 'Catalog',
      body: emptyState('Nothing here yet.'),
    })),
  );
}
