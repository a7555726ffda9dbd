import net from 'node:net';

/**
 * A port that was free a moment ago (for processes that must be told their port up front).
 *
 * Chosen below the kernel's ephemeral range (32768+ here), in a band of its own per vitest worker: a port the
 * kernel handed out with listen(0) can be handed out again to any other process (a Temporal test server's metrics
 * listener, say) in the seconds before our child binds it, which once made a started process find "its" port taken.
 */
const BAND = 1_500;
const FIRST = 15_000;
let next = 0;

export async function freePort(): Promise<number> {
  const worker = Number(process.env.VITEST_POOL_ID ?? process.env.VITEST_WORKER_ID ?? 0) % 10;
  const base = FIRST + worker * BAND;
  if (next === 0) next = Math.floor(Math.random() * BAND);
  for (let tries = 0; tries < BAND; tries++) {
    const port = base + (next++ % BAND);
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port in ${base}..${base + BAND - 1}`);
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

export async function waitFor<T>(
  fn: () => Promise<T | undefined | false>,
  { timeoutMs = 10_000, intervalMs = 50, what = 'condition' } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await fn();
      if (value) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `Timed out after ${timeoutMs} ms waiting for ${what}${lastError instanceof Error ? `: ${lastError.message}` : ''}`,
      );
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
