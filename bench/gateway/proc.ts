// Child processes of the benchmark: one registry, so every exit path (success, error, SIGINT) can stop them all.
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, createWriteStream, type WriteStream } from 'node:fs';
import { createServer } from 'node:net';
import { delimiter, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';

const TAIL_BYTES = 8192;
const STOP_GRACE_MS = 5000;

export interface ManagedChild {
  name: string;
  pid: number;
  child: ChildProcess;
  /** Sends a signal to the child (to its whole process group when started with `group`). */
  signal(sig: NodeJS.Signals): void;
  /** Resolves with the exit code (or the signal name) once the process is gone. */
  exited: Promise<number | string>;
  /** The last few KB of stdout+stderr, for error messages. */
  tail(): string;
  /** SIGTERM, then SIGKILL after a grace period; resolves when the process is gone. */
  stop(): Promise<void>;
}

const running = new Set<ManagedChild>();

export interface StartOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Called with every stdout chunk (the tail is kept regardless). */
  onStdout?: (chunk: string) => void;
  /** Opens an IPC channel (for node children that talk to the orchestrator with process.send). */
  ipc?: boolean;
  /**
   * Runs the child in its own process group and signals the whole group: for a child with children of its own (the
   * all-in-one's Temporal dev server), so a forced stop leaves nothing behind.
   */
  group?: boolean;
  /** How long stop() waits after SIGTERM before SIGKILL (default 5 s). */
  graceMs?: number;
}

export function startChild(name: string, command: string, args: string[], options: StartOptions = {}): ManagedChild {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: options.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
    detached: options.group === true,
  });
  if (child.pid === undefined) throw new Error(`could not start ${name} (${command})`);
  const pid = child.pid;
  const signal = (sig: NodeJS.Signals): void => {
    if (!options.group) {
      child.kill(sig);
      return;
    }
    try {
      process.kill(-pid, sig);
    } catch {
      // the group is gone
    }
  };
  let tail = '';
  // BENCH_CHILD_LOG_DIR=dir keeps each child's whole stdout+stderr in dir/<name>-<pid>.log (e.g. its --trace-gc lines).
  const log: WriteStream | undefined = process.env.BENCH_CHILD_LOG_DIR
    ? createWriteStream(join(process.env.BENCH_CHILD_LOG_DIR, `${name}-${pid}.log`))
    : undefined;
  const keep = (chunk: Buffer): void => {
    tail = (tail + chunk.toString('utf8')).slice(-TAIL_BYTES);
    log?.write(chunk);
  };
  child.stdout?.on('data', (chunk: Buffer) => {
    keep(chunk);
    options.onStdout?.(chunk.toString('utf8'));
  });
  child.stderr?.on('data', keep);

  child.once('close', () => log?.end());
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'));
    child.once('error', (err) => {
      keep(Buffer.from(String(err)));
      resolve('spawn-error');
    });
  });
  const managed: ManagedChild = {
    name,
    pid,
    child,
    signal,
    exited,
    tail: () => tail,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        signal('SIGTERM');
        const killer = setTimeout(() => signal('SIGKILL'), options.graceMs ?? STOP_GRACE_MS);
        await exited;
        clearTimeout(killer);
      }
      // The group's other members (a child's own children) go with it.
      if (options.group) signal('SIGKILL');
      running.delete(managed);
    },
  };
  running.add(managed);
  void exited.then(() => running.delete(managed));
  return managed;
}

/** Runs a command to completion (still registered, so SIGINT stops it) and returns its exit code and output. */
export async function runToCompletion(
  name: string,
  command: string,
  args: string[],
): Promise<{ code: number | string; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const managed = startChild(name, command, args, {
    onStdout: (chunk) => {
      stdout += chunk;
    },
  });
  managed.child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const code = await managed.exited;
  return { code, stdout, stderr };
}

/** Stops every child that is still running, in parallel. */
export async function stopAllChildren(): Promise<void> {
  await Promise.all([...running].map((managed) => managed.stop()));
}

/**
 * Last resort for process 'exit' handlers, which cannot wait. SIGTERM rather than SIGKILL: a SIGKILLed nginx master
 * leaves its worker behind, while SIGTERM lets it take the worker down after we are gone.
 */
export function signalAllChildrenNow(): void {
  for (const managed of running) managed.signal('SIGTERM');
}

/** Arguments that make `node` run a TypeScript file in-process (no tsx CLI wrapper process whose CPU we'd miss). */
export function nodeTsArgs(file: string): string[] {
  return ['--import', import.meta.resolve('tsx'), file];
}

/** Finds an executable on PATH or in the sbin directories (nginx lives in /usr/sbin, off a normal user's PATH). */
export function findBinary(name: string): string {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/local/sbin', '/sbin'];
  for (const dir of dirs) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here; keep looking
    }
  }
  throw new Error(`${name} not found: run \`bash scripts/ensure-bench-tools.sh\` (installs nginx-light and wrk)`);
}

/** A TCP port that was free a moment ago (nginx needs a concrete port in its config). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error('no port assigned'))));
    });
  });
}

/** Polls `url` until it answers (any status), failing early if `owner` exits first. */
export async function waitForHttp(url: string, owner: ManagedChild, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let gone = false;
  void owner.exited.then(() => {
    gone = true;
  });
  for (;;) {
    if (gone) throw new Error(`${owner.name} exited during start-up:\n${owner.tail()}`);
    try {
      const res = await request(url, { headersTimeout: 1000, bodyTimeout: 1000 });
      await res.body.dump();
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`${owner.name} did not answer on ${url} within ${timeoutMs} ms`);
      await sleep(50);
    }
  }
}
