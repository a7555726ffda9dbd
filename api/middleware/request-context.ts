/** First middleware: request id (header and `meta.request_id`), a child logger carrying it, and an access log. */
import type { Middleware } from 'koa';
import type { Logger } from '../../core/logger.js';
import { resolveRequestId } from '../../core/request-id.js';
import type { AppState } from '../context.js';

export function requestContext(logger: Logger): Middleware<AppState> {
  return async (ctx, next) => {
    const started = performance.now();
    const requestId = resolveRequestId(ctx.get('x-request-id') || undefined);
    ctx.state.requestId = requestId;
    ctx.state.log = logger.child({ request_id: requestId });
    ctx.set('X-Request-Id', requestId);
    try {
      await next();
    } finally {
      // ctx.respond === false means a handler (MCP transport) wrote the response itself.
      ctx.state.log.info(
        {
          method: ctx.method,
          path: ctx.path,
          status: ctx.respond === false ? ctx.res.statusCode : ctx.status,
          ms: Math.round((performance.now() - started) * 10) / 10,
        },
        'request',
      );
    }
  };
}
