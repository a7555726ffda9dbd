/**
 * A server span per request of a Koa surface (control plane, agent-tool server) when tracing is on
 * (platform/tracing.ts): child of the caller's `traceparent`, named by the matched route template, carrying the
 * request id. Everything the request does runs with the span active, so a workflow it starts (Temporal's client
 * interceptor) or a gateway call it makes in process (call_api) joins the same trace. Not installed when tracing is off.
 */
import type { Middleware } from 'koa';
import { endHttpSpan, REQUEST_ID_ATTRIBUTE, startServerSpan, withSpan } from '../../core/tracing.js';
import type { AppState } from '../context.js';

export function httpTracing(surface: string): Middleware<AppState> {
  return async (ctx, next) => {
    const span = startServerSpan(`${ctx.method} ${surface}`, ctx.req.headers, {
      'http.request.method': ctx.method,
      'url.path': ctx.path,
      'svc.surface': surface,
      [REQUEST_ID_ATTRIBUTE]: ctx.state.requestId,
    });
    ctx.state.log = ctx.state.log.child({ trace_id: span.spanContext().traceId });
    let failure: unknown;
    try {
      await withSpan(span, next);
    } catch (err) {
      failure = err;
      throw err;
    } finally {
      const route = (ctx as { _matchedRoute?: string })._matchedRoute;
      if (route) {
        span.setAttribute('http.route', route);
        span.updateName(`${ctx.method} ${route}`);
      }
      endHttpSpan(span, ctx.respond === false ? ctx.res.statusCode : ctx.status, 'server', failure);
    }
  };
}
