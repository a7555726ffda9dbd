// Starts bench/gateway/bare-proxy.ts (or another proxy of the same shape: the floor proxy, floor-proxy.ts) as its own
// node process (the way the gateway runs) and waits until it listens.
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { nodeTsArgs, startChild, waitForHttp } from './proc.js';

export interface BareProxy {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

const LISTENING = /listening (\d+)/;
const START_TIMEOUT_MS = 20_000;

export async function startBareProxy(
  upstreamUrl: string,
  variant: { name: string; file: string; env: Record<string, string> } = {
    name: 'bare-proxy',
    file: 'bare-proxy.ts',
    env: {},
  },
): Promise<BareProxy> {
  const script = fileURLToPath(new URL(`./${variant.file}`, import.meta.url));
  const name = variant.name;
  let resolvePort: (port: number) => void = () => undefined;
  const port = new Promise<number>((resolve) => (resolvePort = resolve));
  let stdout = '';
  const child = startChild(name, process.execPath, nodeTsArgs(script), {
    env: { ...process.env, NODE_ENV: 'production', BARE_UPSTREAM: upstreamUrl, ...variant.env },
    onStdout: (chunk) => {
      stdout += chunk;
      const match = LISTENING.exec(stdout);
      if (match?.[1]) resolvePort(Number(match[1]));
    },
  });
  const exitedEarly = child.exited.then((code) => {
    throw new Error(`${name} exited during start-up (${code}):\n${child.tail()}`);
  });
  exitedEarly.catch(() => undefined); // it also "exits early" when stopped on purpose at the end; not an error then
  const timer = new AbortController();
  const tooSlow = sleep(START_TIMEOUT_MS, undefined, { signal: timer.signal }).then(() => {
    throw new Error(`${name} did not start within ${START_TIMEOUT_MS} ms:\n${child.tail()}`);
  });
  tooSlow.catch(() => undefined);
  let listening: number;
  try {
    listening = await Promise.race([port, exitedEarly, tooSlow]);
  } catch (err) {
    await child.stop();
    throw err;
  } finally {
    timer.abort();
  }
  const url = `http://127.0.0.1:${listening}`;
  await waitForHttp(`${url}/`, child);
  return { url, pid: child.pid, stop: () => child.stop() };
}
