/**
 * `GET /metrics` on its own port (`METRICS_PORT`, bound to `METRICS_HOST`, 127.0.0.1 by default), apart from the
 * public surfaces so a scrape never shares their rate limits or exposes internals to the internet. `more` appends
 * another exposition to the answer (the Temporal worker's own series, served by its SDK on a loopback port).
 */
import type { Logger } from '../core/logger.js';
import { startHttpServer, type RunningHttpServer } from './runtime/http-server.js';
import type { Metrics } from '../core/metrics/metrics.js';

export interface MetricsServerOptions {
  host: string;
  port: number;
  logger: Logger;
  /** More series in the Prometheus text format, appended after ours (errors are logged, never fail the scrape). */
  more?: () => Promise<string>;
}

export async function startMetricsServer(metrics: Metrics, opts: MetricsServerOptions): Promise<RunningHttpServer> {
  metrics.collectProcessMetrics();
  return startHttpServer({
    name: 'metrics',
    host: opts.host,
    port: opts.port,
    logger: opts.logger,
    graceMs: 1_000,
    handler: (req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
        res.writeHead(path === '/metrics' ? 405 : 404, { 'content-type': 'text/plain; charset=utf-8' });
        res.end(path === '/metrics' ? 'Use GET.\n' : 'Metrics are at /metrics.\n');
        return;
      }
      void (async () => {
        let body = await metrics.exposition();
        if (opts.more) {
          try {
            body += `\n${await opts.more()}`;
          } catch (err) {
            opts.logger.warn({ err }, 'extra metrics unavailable for this scrape');
          }
        }
        res.writeHead(200, { 'content-type': metrics.contentType, 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : body);
      })().catch((err: unknown) => {
        opts.logger.error({ err }, 'metrics scrape failed');
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        res.end('metrics unavailable\n');
      });
    },
  });
}
