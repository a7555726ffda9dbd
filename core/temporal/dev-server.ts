/**
 * The embedded Temporal for `npm start` with no TEMPORAL_ADDRESS: the Temporal CLI's dev server (built into
 * `.tools/bin/` by scripts/ensure-tools.sh), with its state in `.data/temporal.db`, its Web UI on 8233 and our
 * search attributes registered. If a dev server already answers on the port (a previous run), it is reused.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { access, constants, mkdir } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import type { Logger } from '../logger.js';

export interface DevServerOptions {
  cliPath: string;
  port: number;
  uiPort: number;
  namespace: string;
  dbFile: string;
  logger: Logger;
  startTimeoutMs?: number;
}

export interface DevServer {
  address: string;
  uiUrl: string;
  /** False when an already running server was reused (and will be left running). */
  spawned: boolean;
  stop(): Promise<void>;
}

function portOpen(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.setTimeout(500, () => {
      socket.destroy();
      resolve(false);
    });
  });
}

async function temporalAnswers(address: string): Promise<boolean> {
  try {
    const conn = await Connection.connect({ address, connectTimeout: '1s' });
    try {
      await conn.withDeadline(Date.now() + 1_000, () => conn.workflowService.getSystemInfo({}));
      return true;
    } finally {
      await conn.close();
    }
  } catch {
    return false;
  }
}

export async function startDevServer(opts: DevServerOptions): Promise<DevServer> {
  const address = `127.0.0.1:${opts.port}`;
  const uiUrl = `http://localhost:${opts.uiPort}`;
  if (await portOpen(opts.port)) {
    if (await temporalAnswers(address)) {
      opts.logger.info({ address }, 'reusing the Temporal dev server already running');
      return { address, uiUrl, spawned: false, stop: () => Promise.resolve() };
    }
    throw new Error(`Port ${opts.port} is in use by something that is not Temporal; set TEMPORAL_DEV_PORT.`);
  }
  try {
    await access(opts.cliPath, constants.X_OK);
  } catch {
    throw new Error(
      `The Temporal CLI is missing at ${opts.cliPath}. Run "npm run tools" (needs Go) to build it, or set TEMPORAL_ADDRESS.`,
    );
  }
  await mkdir(path.dirname(opts.dbFile), { recursive: true });

  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(opts.port),
    '--ui-port',
    String(opts.uiPort),
    '--namespace',
    opts.namespace,
    '--db-filename',
    opts.dbFile,
    '--search-attribute',
    'OrgId=Keyword',
    '--search-attribute',
    'ApiSlug=Keyword',
    '--log-level',
    'warn',
    '--log-format',
    'json',
  ];
  const child: ChildProcess = spawn(opts.cliPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4_000);
  });
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });

  const deadline = Date.now() + (opts.startTimeoutMs ?? 30_000);
  while (!(await temporalAnswers(address))) {
    if (exited) throw new Error(`The Temporal dev server exited during start-up:\n${stderr}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`The Temporal dev server did not answer on ${address} in time:\n${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  opts.logger.info({ address, ui: uiUrl }, 'Temporal dev server started');

  return {
    address,
    uiUrl,
    spawned: true,
    stop: () =>
      new Promise<void>((resolve) => {
        if (exited) return resolve();
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}
