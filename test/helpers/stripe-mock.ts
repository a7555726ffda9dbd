/** stripe-mock (built into .tools/bin) on a free port, for the billing tests. */
import { spawn } from 'node:child_process';
import net from 'node:net';
import { STRIPE_MOCK } from './env.js';
import { freePort, waitFor } from './ports.js';

export interface StripeMock {
  url: string;
  port: number;
  stop(): Promise<void>;
}

export async function startStripeMock(): Promise<StripeMock> {
  const port = await freePort();
  const child = spawn(STRIPE_MOCK, ['-http-port', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  child.stderr.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-2_000)));
  await waitFor(
    () =>
      new Promise<boolean>((resolve) => {
        if (exited) throw new Error(`stripe-mock exited: ${stderr}`);
        const s = net.connect(port, '127.0.0.1');
        s.once('connect', () => (s.destroy(), resolve(true)));
        s.once('error', () => resolve(false));
      }),
    { timeoutMs: 15_000, what: 'stripe-mock' },
  );
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        if (exited) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
