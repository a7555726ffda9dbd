/**
 * RedisSpendStore's script replies (core/spend/redis-spend-lua.ts) back into the SpendStore's outcomes
 * (core/spend/spend-store.ts).
 */
import type { Admission, AdmitInput, LeaseGrant, SeenCheck, SettleBatchOutcome, SettleOutcome } from './spend-store.js';

/** ADMIT's reply: its outcome first, then what that outcome carries. */
export function admission(reply: string[], ancestors: AdmitInput['ancestors']): Admission {
  switch (reply[0]) {
    case 'admitted': {
      const admitted: Admission =
        reply[1] === '1'
          ? { outcome: 'admitted', stale: true, generation: Number(reply[2] ?? 0) }
          : { outcome: 'admitted', stale: false };
      if (reply[3]) admitted.idempotency = reply[3] as SeenCheck;
      return admitted;
    }
    case 'hydrate':
      return { outcome: 'hydrate', generation: Number(reply[1] ?? 0) };
    case 'stale_key':
      return { outcome: 'stale_key', version: reply[1]! };
    case 'replay':
      return { outcome: 'replay', record: reply[1]! };
    case 'rate_limited':
      return { outcome: 'rate_limited', retryAfterMs: Math.max(Number(reply[1]), 1) };
    case 'budget':
      // With an ancestor's position (1 = the nearest) when it was an ancestor's budget that stopped the call.
      return reply[1]
        ? { outcome: 'budget', ancestorKeyId: ancestors[Number(reply[1]) - 1]!.keyId, spentCents: Number(reply[2]) }
        : { outcome: 'budget', spentCents: Number(reply[2]) };
    case 'daily_cap':
      // With an ancestor's position, as for the budget.
      return reply[1]
        ? { outcome: 'daily_cap', ancestorKeyId: ancestors[Number(reply[1]) - 1]!.keyId, spentCents: Number(reply[2]) }
        : { outcome: 'daily_cap', spentCents: Number(reply[2]) };
    case 'per_call':
      return { outcome: 'per_call', spentCents: Number(reply[1]) };
    case 'funds':
    case 'credit_limit':
      return { outcome: reply[0], availableCents: Number(reply[1]), spentCents: Number(reply[2]) };
    case 'leased':
    case 'in_flight':
    case 'mismatch':
    case 'suspended':
      return { outcome: reply[0] };
    default:
      throw new Error(`unexpected admit reply ${String(reply[0])}`);
  }
}

/** SETTLE's reply: the stream entry's id (empty when nothing was appended), then per call `credit:billable` or `gone`. */
export function settled(reply: string[], batchSize: number, bucket: number): SettleBatchOutcome {
  const entry = reply[0] ? { stream: String(bucket), id: reply[0] } : null;
  const results: SettleOutcome[] = [];
  for (let i = 0; i < batchSize; i++) {
    const r = reply[i + 1]!;
    if (r === 'gone' || entry === null) {
      results.push({ outcome: 'gone' });
      continue;
    }
    const split = r.indexOf(':');
    results.push({
      outcome: 'settled',
      creditAppliedCents: Number(r.slice(0, split)),
      billableCents: Number(r.slice(split + 1)),
      entry,
    });
  }
  return { entry, results };
}

/** LEASE's reply. */
export function leaseGrant(reply: string[], rateWindow: string): LeaseGrant {
  switch (reply[0]) {
    case 'lease':
      return {
        outcome: 'lease',
        cents: Number(reply[1]),
        tokens: Number(reply[2]),
        stale: reply[3] === '1',
        generation: Number(reply[4] ?? 0),
        rateWindow,
      };
    case 'hydrate':
      return { outcome: 'hydrate', generation: Number(reply[1] ?? 0) };
    case 'stale_key':
      return { outcome: 'stale_key', version: reply[1]! };
    case 'exact':
      return { outcome: 'exact' };
    default:
      throw new Error(`unexpected lease reply ${String(reply[0])}`);
  }
}
