// The pieces of usage partitioning that need no database: a usage id's instant (the sweeper fences with it), the month
// a call's partition covers, and USAGE_RETENTION_DAYS's default and floor.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../core/config.js';
import { idTime, newId } from '../../core/ids.js';
import { partitionFor } from '../../core/usage/usage-partitions.js';

describe('usage partitions', () => {
  it("reads back the instant a usage id was minted with (the gateway's created_at)", () => {
    for (const t of [0, 1_764_072_000_123, Date.UTC(2026, 11, 31, 23, 59, 59, 999), 2 ** 47]) {
      expect(idTime(newId('usage', t))?.getTime()).toBe(t);
    }
    expect(idTime('use_not-an-id')).toBeNull();
    expect(idTime('nope')).toBeNull();
  });

  it('puts a call in its UTC month', () => {
    expect(partitionFor(new Date('2026-11-30T23:59:59.999Z'))).toEqual({
      name: 'usage_events_p202611',
      from: new Date('2026-11-01T00:00:00Z'),
      to: new Date('2026-12-01T00:00:00Z'),
    });
    expect(partitionFor(new Date('2026-12-01T00:00:00Z')).name).toBe('usage_events_p202612');
    expect(partitionFor(new Date('2026-12-15T00:00:00Z')).to).toEqual(new Date('2027-01-01T00:00:00Z'));
  });

  it('keeps usage 400 days by default, and at least 180', () => {
    expect(loadConfig({}).usage.retentionDays).toBe(400);
    expect(loadConfig({ USAGE_RETENTION_DAYS: '365' }).usage.retentionDays).toBe(365);
    expect(() => loadConfig({ USAGE_RETENTION_DAYS: '30' })).toThrow(ConfigError);
  });
});
