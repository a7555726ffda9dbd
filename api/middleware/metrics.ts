/**
 * Counts and times every request of a Koa surface for the operators' metrics (core/metrics/metrics.ts). The route
 * label is the matched template (`/v1/keys/:id`), never the raw path, so ids do not multiply the series; a request no
 * route matched is `unmatched`. Runs first, so it sees the final status of errors turned into envelopes too.
 */
import type { Middleware } from 'koa';
import type { Metrics } from '../../core/metrics/metrics.js';
import type { AppState } from '../context.js';

export function httpMetrics(metrics: Metrics, surface: string): Middleware<AppState> {
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const labels = {
        surface,
        route: (ctx as { _matchedRoute?: string })._matchedRoute ?? 'unmatched',
        method: ctx.method,
        status: String(ctx.status),
      };
      metrics.httpRequests.inc(labels);
      metrics.httpDuration.observe(labels, (performance.now() - started) / 1000);
    }
  };
}
