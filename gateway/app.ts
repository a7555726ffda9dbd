/**
 * The gateway process's request handler: `ALL /v1/proxy/{apiSlug}/{path}` (gateway/proxy.ts) and `GET /health`, on
 * bare node:http to keep the hot path lean (gateway/serve.ts serves each request). It owns the upstream pools, the
 * usage drain and its group committer, the reservation sweeper and the subscription to gateway events
 * (core/spend/gateway-events.ts), and closes them on shutdown. `dispatch` serves a request for a caller already
 * authenticated as a key (the agent-tool server's calls, gateway/in-process.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../core/logger.js';
import { subscribeGatewayEvents } from '../core/spend/gateway-events.js';
import type { GatewayServices } from '../platform/services.js';
import { UsageCommitter } from '../core/spend/usage-committer.js';
import { CatalogCache } from './catalog-cache.js';
import { dispatchInProcess, type InProcessRequest, type InProcessResponse } from './in-process.js';
import { GatewayProxy, type GatewayCaller } from './proxy.js';
import type { ResponseSink } from './respond.js';
import { serveRequest, type ServeContext } from './serve.js';
import { startSweeper, type Sweeper } from '../core/spend/sweeper.js';
import { UsageDrain } from '../core/spend/usage-drain.js';
import { UpstreamClient } from './upstream-client.js';

/**
 * The embedded database (`npm start`) commits the usage drain at most this often: PGlite runs one statement at a time
 * in its own thread (db/embedded.ts), so fewer, larger transactions leave it free for the control plane's reads
 * (docs/durability.md, embedded mode).
 */
export const EMBEDDED_COMMIT_INTERVAL_MS = 20;
/**
 * On Postgres, a drain transaction starts at most this often (calls are durable in the stream meanwhile): at capacity
 * a commit carries ~100-250 calls instead of ~30, so the per-commit rows (a usage batch, its ledger row and accrual,
 * the org, key and day updates) and the statement's fixed cost are shared by more calls (the lean commit at 250 calls
 * costs Postgres about two thirds of what it costs at 60, bench/gateway/commit-cost.ts); a call's row reaches
 * Postgres at most this much later, far inside the 1 s the drain promises (docs/durability.md).
 */
export const COMMIT_INTERVAL_MS = 25;

export type GatewayHandler = ((req: IncomingMessage, res: ServerResponse) => void) & {
  /**
   * Serve one request as a caller already authenticated as a key (the agent-tool server's call_api and run_probe,
   * through gateway/in-process.ts): the same routing, input rule, checks, metering and envelope as over HTTP, minus
   * the bearer step. Settles once the response is written.
   */
  dispatch(req: IncomingMessage, res: ResponseSink, caller: GatewayCaller): Promise<void>;
  /** `dispatch` with a request built in memory and the response captured (gateway/in-process.ts). */
  call(caller: GatewayCaller, request: InProcessRequest): Promise<InProcessResponse>;
  /** Stop the sweeper, commit what is queued, close upstream pools. */
  close(): Promise<void>;
  readonly proxy: GatewayProxy;
  readonly sweeper: Sweeper;
  /** The usage drain: `flush()` resolves when every call answered so far is in Postgres. */
  readonly drain: UsageDrain;
};

export function createGatewayHandler(services: GatewayServices): GatewayHandler {
  const log = services.logger.child({ surface: 'gateway' });
  const { config } = services;
  const upstream = upstreamClient(services);
  const embedded = config.database.kind !== 'postgres';
  const committer = new UsageCommitter(
    {
      orm: services.orm,
      logger: services.logger,
      feePercent: config.billing.platformFeePercent,
      // A named prepared statement on PGlite too (pglite-socket speaks the extended protocol): planned once, not per
      // commit; the PGlite thread's CPU at 500 req/s fell ~30% (issue 32, docs/decisions.md).
      prepared: true,
    },
    // One transaction per EMBEDDED_COMMIT_INTERVAL_MS on the embedded database (its one connection is shared).
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
  const events = followGatewayEvents(services, gateway, catalog, log);

  const ctx: ServeContext = { services, gateway, log, logRequests: log.isLevelEnabled('info') };
  const handler = (req: IncomingMessage, res: ServerResponse): void => void serveRequest(ctx, req, res);
  const dispatch = (req: IncomingMessage, res: ResponseSink, caller: GatewayCaller) =>
    serveRequest(ctx, req, res, caller);
  return Object.assign(handler, {
    dispatch,
    call: (caller: GatewayCaller, request: InProcessRequest) => dispatchInProcess({ dispatch }, caller, request),
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

function upstreamClient({ config, guard }: GatewayServices): UpstreamClient {
  return new UpstreamClient({
    allowPrivate: config.upstreamAllowPrivate,
    trustedAddresses: guard.options.trustedAddresses,
    lookup: guard.options.lookup,
    named: guard.options.named,
    connectTimeoutMs: config.gateway.connectTimeoutMs,
    timeoutMs: config.gateway.upstreamTimeoutMs,
    maxResponseBytes: config.gateway.maxResponseBytes,
  });
}

/**
 * Writers elsewhere announce suspensions, billing-mode, balance and listing changes (core/spend/gateway-events.ts):
 * forget the org's fast state and the listing, so the next call reads Postgres instead of waiting for a refresh.
 * Resolves to the unsubscribe, or undefined when the subscription failed.
 */
function followGatewayEvents(services: GatewayServices, gateway: GatewayProxy, catalog: CatalogCache, log: Logger) {
  return subscribeGatewayEvents(services.counters, {
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
}
