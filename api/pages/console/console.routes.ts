/** The web console (`/console/*`): one router, one file per section (see shell.ts for the frame and the rules). */
import Router from '@koa/router';
import type { Services } from '../../../platform/services.js';
import type { AppState } from '../../context.js';
import { billingConsole } from './billing.page.js';
import { catalogConsole } from './catalog.page.js';
import { keysConsole } from './keys.page.js';
import { overviewConsole } from './overview.page.js';
import { providerConsole } from './provider.page.js';
import { usageConsole } from './usage.page.js';

export function consoleRoutes(services: Services): Router<AppState> {
  const router = new Router<AppState>();
  for (const section of [overviewConsole, keysConsole, usageConsole, billingConsole, catalogConsole, providerConsole]) {
    section(services, router);
  }
  return router;
}
