// One autocannon run at a fixed overall rate (see autocannon.ts). Started by autocannon.ts with its config as JSON in
// argv[2] and an IPC channel: runs autocannon for the configured duration, says 'done' with the figures, exits.
//
// Requests sent are counted here, per connection, from each client's 'request' event (setupClient runs before a
// connection writes its first request): autocannon's own `requests.sent` misses each connection's first request and
// adds its per-second quota instead, so with a rate set it over-counts by about (quota - 1) per connection.
import autocannon, { type Client } from 'autocannon';
import type { AutocannonWorkerConfig, AutocannonWorkerMessage } from './autocannon.js';
import type { AutocannonResult } from './types.js';

const config = JSON.parse(process.argv[2] ?? '{}') as AutocannonWorkerConfig;

/** Resolves once the message is handed to the IPC channel, so exiting right after cannot lose it. */
const send = (message: AutocannonWorkerMessage): Promise<void> =>
  new Promise((resolve, reject) => {
    if (!process.send) return reject(new Error('autocannon-worker must be started with an IPC channel'));
    process.send(message, undefined, undefined, (err) => (err ? reject(err) : resolve()));
  });

async function main(): Promise<void> {
  let requestsSent = 0;
  const run = await autocannon({
    url: config.url,
    method: config.method,
    headers: config.headers,
    ...(config.body === null ? {} : { body: config.body }),
    connections: config.connections,
    overallRate: config.rate,
    duration: config.durationS,
    timeout: 10,
    setupClient: (client: Client) => {
      client.on('request', () => {
        requestsSent++;
      });
    },
  });

  const statuses: Record<string, number> = {};
  let responses = 0;
  let unexpected = 0;
  for (const [status, { count }] of Object.entries(run.statusCodeStats)) {
    statuses[status] = count;
    responses += count;
    if (Number(status) !== config.expectedStatus) unexpected += count;
  }
  const result: AutocannonResult = {
    rate: config.rate,
    connections: config.connections,
    durationS: run.duration,
    requestsSent,
    autocannonRequestsSent: run.requests.sent,
    responses,
    statuses,
    non2xx: run.non2xx,
    unexpected,
    mismatches: run.mismatches,
    errors: run.errors,
    timeouts: run.timeouts,
    latencySamples: run.latency.totalCount,
    latencyMs: { p50: run.latency.p50, p90: run.latency.p90, p99: run.latency.p99, max: run.latency.max },
  };
  await send({ type: 'done', result });
  process.disconnect();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
