/**
 * The all-in-one's gateway thread (started by gateway/thread.ts): the gateway's request handler on an
 * event loop and a heap of its own, listening on GATEWAY_PORT itself, so the control plane's pages, the agent tools'
 * sessions, the Temporal worker's activities and their garbage never sit between a paid call and its answer (issue 32).
 *
 * It exposes to the main thread (Comlink, platform/remote-stores.ts): `call` (the agent tools' call_api and
 * run_probe, gateway/in-process.ts), `metrics` (its series, labelled thread="gateway", served on the main thread's
 * /metrics), `spend` (its memory spend store, embedded mode only) and `stop` (finish in-flight calls, commit the usage
 * drain, close its connections).
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import * as Comlink from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { loadConfig } from '../core/config.js';
import { RedisCounterStore } from '../core/counters/index.js';
import { createLogger } from '../core/logger.js';
import { Metrics, type MetricsJson } from '../core/metrics/metrics.js';
import { enforceRedisRequirements } from '../core/spend/redis-requirements.js';
import type { SpendStore } from '../core/spend/spend-store.js';
import { createGatewayHandler } from './app.js';
import type { InProcessRequest, InProcessResponse } from './in-process.js';
import type { GatewayCaller } from './proxy.js';
import { createGatewayServices } from '../platform/gateway-services.js';
import { startHttpServer } from '../platform/runtime/http-server.js';
import { startTracing } from '../platform/tracing.js';
import { RemoteCounterStore, type CountersPort } from '../platform/remote-stores.js';

export interface GatewayThreadData {
  /** loadConfig's overrides of the main thread (`--demo`, `--processes`), so both read the same configuration. */
  overrides: Record<string, string | undefined>;
  databaseUrl: string;
  temporalAddress: string;
  /** Embedded mode: the main thread's counters over this port (otherwise the thread opens Redis itself). */
  counters?: MessagePort;
  /** Where this thread exposes its API. */
  api: MessagePort;
  /** Traces on (the main thread's OTLP endpoint and service name): this thread's spans export beside its own. */
  tracing?: { serviceName: string; serviceVersion?: string; endpoint: string };
}

export interface GatewayThreadApi {
  /** The gateway's URL once listening. */
  readonly url: string;
  call(caller: GatewayCaller, request: InProcessRequest): Promise<InProcessResponse>;
  metrics(): Promise<MetricsJson>;
  /** Embedded mode only: the memory spend store. */
  readonly spend: SpendStore | undefined;
  stop(): Promise<void>;
}

const data = workerData as GatewayThreadData;

async function main(): Promise<void> {
  const config = loadConfig(process.env, process.cwd(), data.overrides);
  const logger = createLogger({ level: config.logLevel }).child({ thread: 'gateway' });
  // A tracer provider is per thread: without one here the gateway's spans would be lost in the all-in-one.
  const tracing = data.tracing ? startTracing(data.tracing) : undefined;
  const counters = data.counters
    ? new RemoteCounterStore(Comlink.wrap<CountersPort>(nodeEndpoint(data.counters)))
    : undefined;
  const metrics = new Metrics({ thread: 'gateway' });
  if (config.metrics) metrics.collectProcessMetrics();
  const services = await createGatewayServices(config, {
    logger,
    databaseUrl: data.databaseUrl,
    temporalAddress: data.temporalAddress,
    counters,
    metrics,
  });
  if (services.counters instanceof RedisCounterStore) {
    const spend = services.spend;
    await enforceRedisRequirements(
      services.counters.client,
      { production: config.env === 'production', check: config.redisRequirementsCheck },
      logger,
      (violation) => (spend.refusal = violation),
    );
  }
  const handler = createGatewayHandler(services);
  const server = await startHttpServer({
    name: 'gateway',
    host: config.host,
    port: config.ports.gateway,
    logger,
    graceMs: config.shutdownGraceMs,
    handler,
  });

  let stopped: Promise<void> | undefined;
  const api: GatewayThreadApi = {
    url: server.url,
    call: (caller, request) =>
      handler.call(caller, {
        ...request,
        // A Buffer crosses the port as a plain Uint8Array.
        body: request.body
          ? Buffer.from(request.body.buffer, request.body.byteOffset, request.body.byteLength)
          : undefined,
      }),
    metrics: () => metrics.json(),
    spend: data.counters ? services.spend : undefined,
    stop: () =>
      (stopped ??= (async () => {
        await server.close();
        await handler.close();
        await services.close();
        await tracing?.shutdown();
      })()),
  };
  Comlink.expose(api, nodeEndpoint(data.api));
  parentPort?.postMessage({ ready: server.url });
}

main().catch((err: unknown) => {
  parentPort?.postMessage({ error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  process.exitCode = 1;
});
