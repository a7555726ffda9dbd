/**
 * The gateway process's request handler: `ALL /v1/proxy/{apiSlug}/{path}` (gateway/proxy.ts) and `GET /health`, on
 * bare node:http to keep the hot path lean. It owns the upstream pools, the usage drain and its group committer, the
 * reservation sweeper and the subscription to gateway events (core/spend/gateway-events.ts), and closes them on shutdown. `dispatch`
 * serves a request for a caller already authenticated as a key (the agent-tool server's calls, gateway/in-process.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
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
import { subscribeGatewayEvents } from '../core/spend/gateway-events.js';
import type { Services } from '../platform/services.js';
import { UsageCommitter } from '../core/spend/usage-committer.js';
import { CatalogCache } from './catalog-cache.js';
import { GatewayProxy, type GatewayCaller } from './proxy.js';
import { sendError, sendJson, type ResponseSink } from './respond.js';
import { startSweeper, type Sweeper } from '../core/spend/sweeper.js';
import { UsageDrain } from '../core/spend/usage-drain.js';
import { UpstreamClient } from './upstream-client.js';
import { endHttpSpan, REQUEST_ID_ATTRIBUTE, startServerSpan, tracingOn, withSpan } from '../core/tracing.js';

const PROXY_RE = /^\/v1\/proxy\/([^/?#]+)(\/[^?#]*)?$/;

/** The input rule (core/input.ts) over the slug, the path after it and the query, before any lookup or upstream call. */
function checkInput(slug: string, rest: string | undefined, search: string): void {
  checkText(slug, 'path');
  if (rest) checkPath(rest);
  checkSearch(search);
}

/**
 * The embedded database (`npm start`) commits the usage drain at most this often: its statements run on the event
 * loop, so fewer, larger transactions keep answers from waiting behind them (docs/durability.md, embedded mode).
 */
export const EMBEDDED_COMMIT_INTERVAL_MS = 20;
/**
 * On Postgres, a drain transaction starts at most this often (calls are durable in the stream meanwhile): at capacity
 * a commit carries ~60 calls instead of ~30, so the per-commit rows (a usage batch, its ledger row and accrual, the
 * org, key and day updates) stay under 0.1 per call and Postgres does half the transactions; a call's row reaches
 * Postgres at most this much later.
 */
export const COMMIT_INTERVAL_MS = 10;

export type GatewayHandler = ((req: IncomingMessage, res: ServerResponse) => void) & {
  /**
   * Serve one request as a caller already authenticated as a key (the agent-tool server's call_api and run_probe,
   * through gateway/in-process.ts): the same routing, input rule, checks, metering and envelope as over HTTP, minus
   * the bearer step. Settles once the response is written.
   */
  dispatch(req: IncomingMessage, res: ResponseSink, caller: GatewayCaller): Promise<void>;
  /** Stop the sweeper, commit what is queued, close upstream pools. */
  close(): Promise<void>;
  readonly proxy: GatewayProxy;
  readonly sweeper: Sweeper;
  /** The usage drain: `flush()` resolves when every call answered so far is in Postgres. */
  readonly drain: UsageDrain;
};

export function createGatewayHandler(services: Services): GatewayHandler {
  const log = services.logger.child({ surface: 'gateway' });
  const { config } = services;
  const upstream = new UpstreamClient({
    allowPrivate: config.upstreamAllowPrivate,
    trustedAddresses: services.guard.options.trustedAddresses,
    lookup: services.guard.options.lookup,
    connectTimeoutMs: config.gateway.connectTimeoutMs,
    timeoutMs: config.gateway.upstreamTimeoutMs,
    maxResponseBytes: config.gateway.maxResponseBytes,
  });
  const embedded = config.database.kind !== 'postgres';
  const committer = new UsageCommitter(
    {
      orm: services.orm,
      logger: services.logger,
      feePercent: config.billing.platformFeePercent,
      prepared: !embedded,
    },
    // The embedded database runs its statements on this event loop: one transaction per EMBEDDED_COMMIT_INTERVAL_MS.
    { minIntervalMs: embedded ? EMBEDDED_COMMIT_INTERVAL_MS : COMMIT_INTERVAL_MS },
  );
  const catalog = new CatalogCache(services);
  const { metrics } = services;
  const drain = new UsageDrain(services.spend, committer, log, {
    claimIdleMs: config.gateway.drainClaimIdleMs,
    claimIntervalMs: config.gateway.drainClaimIntervalMs,
    onBooked: (call) => {
      metrics.drainBooked.inc({ outcome: call.outcome });
      metrics.drainLag.observe(Math.max(0, Date.now() - call.at.getTime() - call.latencyMs) / 1000);
    },
  });
  metrics.watchDrainBacklog(() => drain.pending);
  drain.start();
  const gateway = new GatewayProxy(services, catalog, upstream, committer, drain);
  metrics.watchReservations(() => gateway.admissions.reservations());
  const sweeper = startSweeper({ ...services, intervalMs: config.gateway.sweepIntervalMs });
  // Writers elsewhere announce suspensions, billing-mode, balance and listing changes (core/spend/gateway-events.ts):
  // forget the org's fast state and the listing, so the next call reads Postgres instead of waiting for a refresh.
  const events = subscribeGatewayEvents(services.counters, {
    orgChanged: (orgId) => {
      gateway.admissions.leases?.dropOrg(orgId);
      services.spend.forgetOrg(orgId).catch((err: unknown) => {
        log.warn({ err: (err as Error).message, org_id: orgId }, 'could not forget an org announced as changed');
      });
    },
    listingChanged: (slug) => catalog.invalidate(slug),
  }).catch((err: unknown) => {
    log.warn({ err: (err as Error).message }, 'could not subscribe to gateway events; relying on refreshes');
    return undefined;
  });

  async function handle(
    req: IncomingMessage,
    res: ResponseSink,
    requestId: string,
    caller: GatewayCaller | undefined,
  ): Promise<void> {
    const url = req.url ?? '/';
    const query = url.indexOf('?');
    const pathname = query === -1 ? url : url.slice(0, query);
    if (pathname === '/health') {
      if (req.method !== 'GET' && req.method !== 'HEAD') throw new MethodNotAllowedError(['GET', 'HEAD']);
      // The pid tells apart the processes behind one port (GATEWAY_PROCESSES > 1: node:cluster workers).
      const report = { ...publicHealth(await services.health.check('gateway')), pid: process.pid };
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
      return;
    }
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
      if (caller) await gateway.handleAuthenticated(req, res, requestId, slug, match[2] ?? '/', search, caller);
      else await gateway.handle(req, res, requestId, slug, match[2] ?? '/', search);
      return;
    }
    throw new NotFoundError(`No route for ${req.method ?? 'GET'} ${pathname}.`);
  }

  const logRequests = log.isLevelEnabled('info');
  const serve = (req: IncomingMessage, res: ResponseSink, caller?: GatewayCaller): Promise<void> => {
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
    const done = () => {
      const ms = performance.now() - started;
      const url = req.url ?? '/';
      const labels = {
        surface: 'gateway',
        route: url.startsWith('/v1/proxy/') ? '/v1/proxy/:slug/*' : url === '/health' ? '/health' : 'unmatched',
        method: req.method ?? 'GET',
        status: String(res.statusCode),
      };
      metrics.httpRequests.inc(labels);
      metrics.httpDuration.observe(labels, ms / 1000);
      if (span) {
        span.setAttribute('http.route', labels.route);
        span.updateName(`${labels.method} ${labels.route}`);
        endHttpSpan(span, res.statusCode, 'server');
      }
      if (!logRequests) return;
      log.info(
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
    };
    const work = span ? withSpan(span, () => handle(req, res, requestId, caller)) : handle(req, res, requestId, caller);
    return work.then(done, (err: unknown) => {
      const appError = toAppError(err);
      if (appError instanceof InternalError || appError.status === 500 || appError.status === 503) {
        log.error({ request_id: requestId, err: appError.cause ?? appError }, 'gateway request failed');
        span?.recordException(appError.cause instanceof Error ? appError.cause : appError);
      }
      // Drain a body we did not read so the keep-alive connection stays usable.
      req.resume();
      if (!res.headersSent) sendError(res, requestId, appError);
      else res.destroy();
      done();
    });
  };
  const handler = (req: IncomingMessage, res: ServerResponse): void => void serve(req, res);
  return Object.assign(handler, {
    dispatch: (req: IncomingMessage, res: ResponseSink, caller: GatewayCaller) => serve(req, res, caller),
    proxy: gateway,
    sweeper,
    drain,
    async close() {
      await (
        await events
      )?.();
      await sweeper.stop();
      await gateway.admissions.close();
      await drain.stop();
      await committer.flush();
      await upstream.close();
    },
  });
}
