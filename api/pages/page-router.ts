/** A router of server-rendered pages, built from the page files' registration functions (one per page or group). */
import Router from '@koa/router';
import type { Services } from '../../platform/services.js';
import type { AppState } from '../context.js';

export type PageRegistration = (router: Router<AppState>, services: Services) => void;

export function pageRouter(services: Services, ...pages: PageRegistration[]): Router<AppState> {
  const router = new Router<AppState>();
  for (const register of pages) register(router, services);
  return router;
}
