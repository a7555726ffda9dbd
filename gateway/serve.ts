/**
 * Serving one gateway request (gateway/app.ts makes the handler): `GET /health` or `ALL /v1/proxy/{apiSlug}/{path}`
 * (gateway/proxy.ts), then the request's metrics, span and log line, and the error envelope for a failure.
 */
import type { IncomingMessage } from 'node:http';
import type { Span } from '@opentelemetry/api';
import {
  InternalError,
  MethodNotAllowedError,
  NotFoundError,
  ServiceUnavailableError,
  toAppError,
} from '../core/errors.js';
import { fail, ok } from '../core/envelope.js';
import { publicHealth } from '../core/health/health.service.js';
import { newId } from '../core/ids.js';
import { checkPath, checkSearch, checkText } from '../core/input.js';
import type { Logger } from '../core/logger.js';
import type { GatewayServices } from '../platform/services.js';
import type { GatewayProxy, GatewayCaller } from './proxy.js';
import { sendError, sendJson, type ResponseSink } from './respond.js';
import { endHttpSpan, REQUEST_ID_ATTRIBUTE, startServerSpan, tracingOn, withSpan } from '../core/tracing.js';

const PROXY_RE = /^\/v1\/proxy\/([^/?#]+)(\/[^?#]*)?$/;

/** What serving a request needs, fixed when the handler is made. */
export interface ServeContext {
  readonly services: GatewayServices;
  readonly gateway: GatewayProxy;
  /** The gateway's logger, and whether it logs each request (info). */
  readonly log: Logger;
  readonly logRequests: boolean;
}

/** The input rule (core/input.ts) over the slug, the path after it and the query, before any lookup or upstream call. */
function checkInput(slug: string, rest: string | undefined, search: string): void {
  checkText(slug, 'path');
  if (rest) checkPath(rest);
  checkSearch(search);
}

/** Serve one request; `caller` when it is already authenticated as a key (gateway/in-process.ts). Never rejects. */
export function serveRequest(
  ctx: ServeContext,
  req: IncomingMessage,
  res: ResponseSink,
  caller?: GatewayCaller,
): Promise<void> {
  // Always our own id: it names the usage row and the replay's original_request_id. A caller's X-Request-Id is
  // stored beside it (usage_events.client_request_id), never in its place.
  const requestId = newId('request');
  const started = performance.now();
  // Tracing off (the default): no span, nothing else on this path.
  const span = tracingOn()
    ? startServerSpan(`${req.method ?? 'GET'} gateway`, req.headers, {
        'http.request.method': req.method ?? 'GET',
        'svc.surface': 'gateway',
        [REQUEST_ID_ATTRIBUTE]: requestId,
      })
    : undefined;
  const done = () => finished(ctx, req, res, requestId, started, span);
  const work = span
    ? withSpan(span, () => handle(ctx, req, res, requestId, caller))
    : handle(ctx, req, res, requestId, caller);
  return work.then(done, (err: unknown) => {
    const appError = toAppError(err);
    if (appError instanceof InternalError || appError.status === 500 || appError.status === 503) {
      ctx.log.error({ request_id: requestId, err: appError.cause ?? appError }, 'gateway request failed');
      span?.recordException(appError.cause instanceof Error ? appError.cause : appError);
    }
    // Drain a body we did not read so the keep-alive connection stays usable.
    req.resume();
    if (!res.headersSent) sendError(res, requestId, appError);
    else res.destroy();
    done();
  });
}

/** A request is over: its metrics, its span's end and its log line. */
function finished(
  ctx: ServeContext,
  req: IncomingMessage,
  res: ResponseSink,
  requestId: string,
  started: number,
  span: Span | undefined,
): void {
  const ms = performance.now() - started;
  const url = req.url ?? '/';
  const labels = {
    surface: 'gateway',
    route: url.startsWith('/v1/proxy/') ? '/v1/proxy/:slug/*' : url === '/health' ? '/health' : 'unmatched',
    method: req.method ?? 'GET',
    status: String(res.statusCode),
  };
  const { metrics } = ctx.services;
  metrics.httpRequests.inc(labels);
  metrics.httpDuration.observe(labels, ms / 1000);
  if (span) {
    span.setAttribute('http.route', labels.route);
    span.updateName(`${labels.method} ${labels.route}`);
    endHttpSpan(span, res.statusCode, 'server');
  }
  if (!ctx.logRequests) return;
  ctx.log.info(
    {
      request_id: requestId,
      ...(span ? { trace_id: span.spanContext().traceId } : {}),
      method: req.method,
      path: req.url,
      status: res.statusCode,
      ms: Math.round(ms * 10) / 10,
    },
    'request',
  );
}

async function handle(
  ctx: ServeContext,
  req: IncomingMessage,
  res: ResponseSink,
  requestId: string,
  caller: GatewayCaller | undefined,
): Promise<void> {
  const url = req.url ?? '/';
  const query = url.indexOf('?');
  const pathname = query === -1 ? url : url.slice(0, query);
  if (pathname === '/health') return health(ctx, req, res, requestId);
  const match = PROXY_RE.exec(pathname);
  if (match) {
    let slug = match[1]!;
    // Slugs are plain ASCII: decoding (and its try) only when something is percent-encoded.
    if (slug.includes('%')) {
      try {
        slug = decodeURIComponent(slug);
      } catch {
        throw new NotFoundError('Malformed API slug.');
      }
    }
    const search = url.length > pathname.length ? url.slice(pathname.length) : '';
    checkInput(slug, match[2], search);
    const { gateway } = ctx;
    if (caller) await gateway.handleAuthenticated(req, res, requestId, slug, match[2] ?? '/', search, caller);
    else await gateway.handle(req, res, requestId, slug, match[2] ?? '/', search);
    return;
  }
  throw new NotFoundError(`No route for ${req.method ?? 'GET'} ${pathname}.`);
}

async function health(ctx: ServeContext, req: IncomingMessage, res: ResponseSink, requestId: string): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') throw new MethodNotAllowedError(['GET', 'HEAD']);
  // The pid tells apart the processes behind one port (GATEWAY_PROCESSES > 1: node:cluster workers).
  const report = { ...publicHealth(await ctx.services.health.check('gateway')), pid: process.pid };
  if (report.status === 'ok') sendJson(res, 200, ok(report, requestId), { 'X-Request-Id': requestId });
  else
    sendJson(
      res,
      503,
      fail(
        new ServiceUnavailableError('One or more components are unavailable.', { details: { ...report } }),
        requestId,
      ),
      { 'X-Request-Id': requestId },
    );
}
