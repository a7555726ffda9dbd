/**
 * Read-your-writes for money reads (docs/durability.md): a call's answer is sent once its usage is durable in the
 * fast state's usage stream, and Postgres has it within milliseconds in steady state. A caller that reads its balance,
 * usage or key spend from the control plane right after a call must see that call, so an authenticated request first
 * waits (briefly) until the org has no usage events on the way to Postgres. One HGET when nothing is pending.
 */
import type { SpendStore } from './spend-store.js';

/** The most a read waits for the drain; past it the read goes ahead (Postgres is behind: docs/durability.md). */
export const BARRIER_TIMEOUT_MS = 2_000;

export async function untilUsageDrained(
  spend: SpendStore,
  orgId: string,
  timeoutMs = BARRIER_TIMEOUT_MS,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let delay = 2;
  for (;;) {
    let pending: number;
    try {
      pending = await spend.pendingUsage(orgId);
    } catch {
      return; // the fast state is unreachable: nothing can drain now either; read what Postgres has
    }
    if (pending <= 0 || Date.now() >= deadline) return;
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 25);
  }
}
