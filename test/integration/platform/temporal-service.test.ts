// Health probes against an unreachable Temporal fail within their deadline and leave nothing running behind them:
// a probe that kept retrying after close() used to crash the process from a timer ("Channel has been shut down").
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../core/logger.js';
import { TemporalService } from '../../../core/temporal/temporal.service.js';
import { NO_TEMPORAL } from '../../helpers/services.js';

describe('TemporalService health probe', () => {
  it('fails within the deadline and leaves no retries behind after close', async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    try {
      const service = new TemporalService(
        { address: NO_TEMPORAL, namespace: 'default', taskQueue: 'q' },
        createLogger({ level: 'silent' }),
      );
      const started = Date.now();
      await expect(service.ping(500)).rejects.toThrow();
      expect(Date.now() - started).toBeLessThan(2_500);
      // Close while a probe is still in flight (what a shutdown during a health check does).
      // (A call cut off by close() may never settle; callers race it with their own timeout, as HealthService does.)
      void service.ping(5_000).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 300));
      await service.close();
      // The default retry interceptor's backoff would fire within this window.
      await new Promise((r) => setTimeout(r, 3_000));
      expect(uncaught).toEqual([]);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });
});
