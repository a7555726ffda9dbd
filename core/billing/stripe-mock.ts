/**
 * The embedded payments default: when no STRIPE_SECRET_KEY is set in the all-embedded mode and stripe-mock has been
 * built into .tools/bin, run it on a free loopback port so billing routes work locally without a Stripe account.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { access, constants } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import type { Logger } from '../logger.js';

export const EMBEDDED_STRIPE_SECRET_KEY = 'sk_test_embeddedStripeMock';

export interface EmbeddedStripe {
  apiBase: string;
  secretKey: string;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

async function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

/** Start stripe-mock if its binary exists next to the Temporal CLI; undefined when it does not. */
export async function startEmbeddedStripe(toolsBin: string, logger: Logger): Promise<EmbeddedStripe | undefined> {
  const binary = path.join(toolsBin, 'stripe-mock');
  try {
    await access(binary, constants.X_OK);
  } catch {
    logger.info('stripe-mock is not built: billing routes will answer 503 (run "npm run tools")');
    return undefined;
  }
  const port = await freePort();
  const child: ChildProcess = spawn(binary, ['-http-port', String(port)], { stdio: 'ignore' });
  // Track exit with the event: a child killed by a signal has exitCode null (signalCode set).
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  const deadline = Date.now() + 10_000;
  while (!(await answers(port))) {
    if (exited || Date.now() > deadline) {
      child.kill('SIGKILL');
      logger.warn('stripe-mock did not start; billing routes will answer 503');
      return undefined;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  logger.info({ port }, 'stripe-mock started (embedded payments)');
  return {
    apiBase: `http://127.0.0.1:${port}`,
    // stripe-mock takes any "valid looking" test key: sk_test_ then letters and digits only (an underscore after
    // the prefix is refused with a 401, which once made every embedded payment fail).
    secretKey: EMBEDDED_STRIPE_SECRET_KEY,
    stop: () =>
      new Promise<void>((resolve) => {
        if (exited) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
