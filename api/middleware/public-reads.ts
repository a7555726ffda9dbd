/**
 * The per-address limit on public catalog reads (issue 31): the storefront pages and the public catalog JSON routes
 * count one hit per request against PUBLIC_RATE_LIMIT_PER_MIN per client address (`ctx.ip`, after the trusted proxy
 * hops: platform/runtime/proxy-trust.ts) in a fixed one-minute window of the counter store (Redis, shared by every
 * process). Over it: 429 `rate_limited` with `Retry-After` (an HTML page on the storefront, the envelope on JSON).
 */
import type { Middleware } from 'koa';
import { RateLimitedError } from '../../core/errors.js';
import type { Services } from '../../platform/services.js';
import type { AppState } from '../context.js';

const WINDOW_MS = 60_000;

/** Count this request; throws the 429 when the address is over its limit. */
export async function countPublicRead(
  services: Pick<Services, 'counters' | 'config'>,
  ctx: { ip: string },
): Promise<void> {
  const hit = await services.counters.hitWindow(
    `rl:public:ip:${ctx.ip}`,
    services.config.limits.publicReadsPerMin,
    WINDOW_MS,
  );
  if (!hit.allowed) {
    throw new RateLimitedError(
      hit.resetMs / 1000,
      'Too many requests from your address to the public catalog; wait a moment and try again.',
    );
  }
}

/** For a router of public JSON reads: GET and HEAD count (any other method of the router does not). */
export function publicReads(services: Pick<Services, 'counters' | 'config'>): Middleware<AppState> {
  return async (ctx, next) => {
    if (ctx.method === 'GET' || ctx.method === 'HEAD') await countPublicRead(services, ctx);
    await next();
  };
}
