/**
 * The embedded Temporal for `npm start` with no TEMPORAL_ADDRESS: the Temporal CLI's dev server (built into
 * `.tools/bin/` by scripts/ensure-tools.sh), with its state in `.data/temporal.db`, its Web UI on 8233 and our
 * search attributes registered.
 *
 * A server we spawn is marked as ours: our namespace's `data` records the state file it was started with. A server
 * already answering on the port is reused only when it carries our mark (one left running by an earlier run of this
 * same checkout). Anything else is refused with a message that says what to do: a second marketplace on the same
 * machine, or a developer's own dev server, would otherwise poll the same task queue and run our activities against
 * its database (and its against ours).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { access, constants, mkdir } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import type { Logger } from '../core/logger.js';

export interface DevServerOptions {
  cliPath: string;
  port: number;
  uiPort: number;
  namespace: string;
  dbFile: string;
  logger: Logger;
  startTimeoutMs?: number;
}

/** A start-up problem the person running `npm start` must fix; its message says how (printed without a stack). */
export class DevServerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DevServerError';
  }
}

/** The key, in our namespace's `data`, that records which state file the dev server was started with. */
export const OWNER_MARK = 'svc-marketplace.temporal-db-file';

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

/** Whose server is this: the state file its namespace is marked with, if any. */
type Owner = { kind: 'marked'; dbFile: string } | { kind: 'unmarked' } | { kind: 'no-namespace' };

async function ownerOf(address: string, namespace: string): Promise<Owner> {
  const conn = await Connection.connect({ address, connectTimeout: '2s' });
  try {
    const res = await conn.withDeadline(Date.now() + 5_000, () =>
      conn.workflowService.describeNamespace({ namespace }),
    );
    const dbFile = res.namespaceInfo?.data?.[OWNER_MARK];
    return dbFile ? { kind: 'marked', dbFile } : { kind: 'unmarked' };
  } catch (err) {
    if ((err as { code?: number }).code === 5) return { kind: 'no-namespace' }; // gRPC NOT_FOUND
    throw err;
  } finally {
    await conn.close();
  }
}

async function markAsOurs(address: string, namespace: string, dbFile: string): Promise<void> {
  const conn = await Connection.connect({ address, connectTimeout: '2s' });
  try {
    await conn.withDeadline(Date.now() + 5_000, () =>
      conn.workflowService.updateNamespace({ namespace, updateInfo: { data: { [OWNER_MARK]: dbFile } } }),
    );
  } finally {
    await conn.close();
  }
}

function refuseForeignServer(opts: DevServerOptions, owner: Owner): DevServerError {
  const ports = 'give this marketplace free ports with TEMPORAL_DEV_PORT and TEMPORAL_UI_PORT';
  if (owner.kind === 'marked') {
    return new DevServerError(
      `Port ${opts.port} already has the Temporal dev server of another marketplace (its state is ${owner.dbFile}; ours ` +
        `would be ${opts.dbFile}). Sharing it would run each one's workflows and activities against the other's ` +
        `database. Stop the other marketplace, or ${ports}.`,
    );
  }
  const why =
    owner.kind === 'no-namespace'
      ? `it has no namespace "${opts.namespace}"`
      : `its namespace "${opts.namespace}" does not carry our mark`;
  return new DevServerError(
    `Port ${opts.port} already has a Temporal server that this marketplace did not start (${why}). Reusing it would ` +
      `mix our workflows and activities with whatever else uses it. Stop it (it may be a dev server left running by ` +
      `another project or an older version of this one), ${ports}, or set TEMPORAL_ADDRESS to use that server on ` +
      `purpose.`,
  );
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

/** The server already on the port: ours (left running by an earlier run) is reused; anything else is refused. */
async function existingServer(opts: DevServerOptions, address: string, uiUrl: string): Promise<DevServer | undefined> {
  if (!(await portOpen(opts.port))) return undefined;
  if (await temporalAnswers(address)) {
    const owner = await ownerOf(address, opts.namespace);
    if (owner.kind !== 'marked' || owner.dbFile !== opts.dbFile) throw refuseForeignServer(opts, owner);
    opts.logger.info({ address }, 'reusing our Temporal dev server, left running by an earlier run');
    return { address, uiUrl, spawned: false, stop: () => Promise.resolve() };
  }
  throw new DevServerError(
    `Port ${opts.port} is in use by something that is not Temporal; set TEMPORAL_DEV_PORT to a free port.`,
  );
}

/** The CLI's arguments: a dev server on loopback, our namespace, its SQLite file and our search attributes. */
function devServerArgs(opts: DevServerOptions): string[] {
  return [
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
}

export async function startDevServer(opts: DevServerOptions): Promise<DevServer> {
  const address = `127.0.0.1:${opts.port}`;
  const uiUrl = `http://localhost:${opts.uiPort}`;
  const running = await existingServer(opts, address, uiUrl);
  if (running) return running;
  try {
    await access(opts.cliPath, constants.X_OK);
  } catch {
    throw new DevServerError(
      `The Temporal CLI is missing at ${opts.cliPath}. Run "npm run tools" (needs Go) to build it, or set TEMPORAL_ADDRESS.`,
    );
  }
  await mkdir(path.dirname(opts.dbFile), { recursive: true });

  const args = devServerArgs(opts);
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
    if (exited) throw new DevServerError(`The Temporal dev server exited during start-up:\n${stderr}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new DevServerError(`The Temporal dev server did not answer on ${address} in time:\n${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  // What answered must be our child, not a server that took the port while ours was starting (ours then exits).
  if (exited) throw new DevServerError(`The Temporal dev server exited during start-up:\n${stderr}`);
  const stop = () =>
    new Promise<void>((resolve) => {
      if (exited) return resolve();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      child.kill('SIGTERM');
    });
  try {
    await markAsOurs(address, opts.namespace, opts.dbFile);
  } catch (err) {
    await stop();
    throw err;
  }
  opts.logger.info({ address, ui: uiUrl }, 'Temporal dev server started');

  return { address, uiUrl, spawned: true, stop };
}
