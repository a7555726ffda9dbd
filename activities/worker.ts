/**
 * The Temporal worker: registers workflows/ and the activities built from this process's services, on the
 * `marketplace` task queue. Runs alone (`npm run start:worker`) or inside the all-in-one process.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import {
  bundleWorkflowCode,
  DefaultLogger,
  NativeConnection,
  Runtime,
  Worker,
  type ActivityInterceptorsFactory,
  type WorkflowBundleOption,
  type WorkerOptions,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/worker/index.js';
import { createRequire } from 'node:module';
import type { Tracing } from '../platform/tracing.js';
import type { Metrics } from '../core/metrics/metrics.js';
import type { Services } from '../platform/services.js';
import { startEarningsFolder } from '../core/billing/earnings.service.js';
import { startReloadTrigger } from '../core/billing/reload-trigger.js';
import { createActivities, type ActivityServices } from './index.js';

export function workflowsPath(): string {
  const base = path.join(import.meta.dirname, '..', 'workflows', 'index');
  return existsSync(`${base}.ts`) ? `${base}.ts` : `${base}.js`;
}

let runtimeInstalled = false;
/** Route the SDK's own logs at `level` and above (once per process, before any worker or test server starts). */
/**
 * Install the Temporal runtime once per process. With `prometheusBindAddress` (METRICS_PORT set on a worker) the SDK
 * exports its own metrics there (workflow completed/failed, task latencies, …); the process's /metrics appends them.
 */
export function installRuntimeOnce(
  level: 'WARN' | 'INFO' | 'ERROR',
  options: { prometheusBindAddress?: string } = {},
): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  try {
    Runtime.install({
      logger: new DefaultLogger(level),
      ...(options.prometheusBindAddress
        ? {
            telemetryOptions: {
              metrics: { prometheus: { bindAddress: options.prometheusBindAddress, countersTotalSuffix: true } },
            },
          }
        : {}),
    });
  } catch {
    // Already installed by someone else in this process (tests): keep theirs.
  }
}

/** Bundle the workflow code once (a few seconds); tests share one bundle across workers. */
export async function bundleWorkflows(options: { tracing?: boolean } = {}): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode({
    workflowsPath: workflowsPath(),
    logger: new DefaultLogger('WARN'),
    ...(options.tracing ? { workflowInterceptorModules: WORKFLOW_TRACING_MODULES } : {}),
  });
}

export interface RunningWorker {
  worker: Worker;
  /** Resolves when the worker has stopped (after shutdown()). */
  done: Promise<void>;
  shutdown(): Promise<void>;
}

export async function startWorker(
  services: ActivityServices & Pick<Services, 'temporal' | 'logger' | 'earnings'> & Partial<Pick<Services, 'metrics'>>,
  options: {
    workflowBundle?: WorkflowBundleOption;
    reloadTrigger?: boolean;
    /**
     * Create the recurring schedules (the default). Tests that compare two reads of scores, stats or boards start
     * without them, so a scheduled rollup cannot land between the reads (docs/testing.md); they run rollups by hand.
     */
    schedules?: boolean;
    /** This process's tracing (platform/tracing.ts); workflow and activity spans when enabled. */
    tracing?: Tracing;
  } = {},
): Promise<RunningWorker> {
  installRuntimeOnce('WARN');
  const { address, namespace, taskQueue } = services.temporal.target;
  const connection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection,
    namespace,
    taskQueue,
    ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : { workflowsPath: workflowsPath() }),
    activities: createActivities(services),
    ...workerObservability(services.metrics, options.tracing, options.workflowBundle !== undefined),
  });
  const done = worker.run().finally(() => connection.close());
  // Off the gateway's request path: start auto-reloads for orgs the ledger marked.
  const reloadTrigger = options.reloadTrigger === false ? undefined : startReloadTrigger(services);
  // Off the gateway's request path too: fold providers' queued earnings into their ledgers.
  const folder = startEarningsFolder(services.earnings, services.logger);
  // A fresh install (or one stopped for months) never waits a day for this month's usage partition.
  try {
    const partitions = await services.usagePartitions.ensure();
    if (partitions.created.length > 0) services.logger.info(partitions, 'usage partitions created at worker start');
  } catch (err) {
    services.logger.error({ err }, 'usage partitions not ensured at worker start (the schedule retries)');
  }
  const schedules = options.schedules === false ? [] : await services.temporal.ensureSchedules();
  services.logger.info({ taskQueue, namespace, schedules_created: schedules }, 'temporal worker running');
  return {
    worker,
    done,
    async shutdown() {
      await reloadTrigger?.stop();
      await folder.stop();
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await done;
    },
  };
}

/** The workflow-side tracing interceptors, bundled into the workflow code when tracing is on. */
export const WORKFLOW_TRACING_MODULES = [
  createRequire(import.meta.url).resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors'),
];

/**
 * Metrics and, when tracing is on, Temporal's OpenTelemetry interceptors: activity spans continue the workflow's
 * trace (and activities' upstream calls continue theirs), workflow spans made inside the sandbox reach this
 * process's span processor through the `exporter` sink. A pre-built workflow bundle must then have been built with
 * WORKFLOW_TRACING_MODULES (bundleWorkflows({ tracing: true })).
 */
function workerObservability(
  metrics: Metrics | undefined,
  tracing: Tracing | undefined,
  prebundled: boolean,
): Partial<WorkerOptions> {
  const activity: ActivityInterceptorsFactory[] = [];
  if (metrics) activity.push(activityMetrics(metrics));
  if (!tracing?.enabled || !tracing.processor || !tracing.resource) {
    return activity.length ? { interceptors: { activity } } : {};
  }
  activity.push((ctx) => ({
    inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
    outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
  }));
  return {
    interceptors: { activity, ...(prebundled ? {} : { workflowModules: WORKFLOW_TRACING_MODULES }) },
    sinks: { exporter: makeWorkflowExporter(tracing.processor, tracing.resource) },
  };
}

/** Counts each activity execution by type and outcome (completed, failed) for the operators' metrics. */
function activityMetrics(metrics: Metrics): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      async execute(input, next) {
        const activity = ctx.info.activityType;
        try {
          const result = await next(input);
          metrics.activities.inc({ activity, outcome: 'completed' });
          return result;
        } catch (err) {
          metrics.activities.inc({ activity, outcome: 'failed' });
          throw err;
        }
      },
    },
  });
}
