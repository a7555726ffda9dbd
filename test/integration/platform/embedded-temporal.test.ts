// The embedded Temporal dev server belongs to one marketplace (one state file): a server already on the port is
// reused only when it carries our mark, so two marketplaces on one machine, or a developer's own dev server, never
// end up polling each other's task queue with activities that write to the wrong database.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../core/logger.js';
import { DevServerError, startDevServer, type DevServer } from '../../../platform/temporal-dev-server.js';
import { TEMPORAL_CLI } from '../../helpers/env.js';
import { freePort } from '../../helpers/ports.js';
import { startProcess } from '../../helpers/processes.js';
import { startTemporal } from '../../helpers/temporal.js';

const logger = createLogger({ level: 'silent' });

describe('embedded Temporal ownership', () => {
  let dirA: string;
  let dirB: string;
  let port: number;
  let uiPort: number;
  let first: DevServer | undefined;
  const options = (dir: string) => ({
    cliPath: TEMPORAL_CLI,
    port,
    uiPort,
    namespace: 'default',
    dbFile: path.join(dir, 'temporal.db'),
    logger,
  });

  beforeAll(async () => {
    [dirA, dirB] = [await mkdtemp(path.join(os.tmpdir(), 'mp-tA-')), await mkdtemp(path.join(os.tmpdir(), 'mp-tB-'))];
    [port, uiPort] = [await freePort(), await freePort()];
    first = await startDevServer(options(dirA));
  }, 60_000);
  afterAll(async () => {
    await first?.stop();
    await rm(dirA, { recursive: true, force: true });
    await rm(dirB, { recursive: true, force: true });
  });

  it('the marketplace that started the server reuses it (a second start of the same checkout)', async () => {
    expect(first!.spawned).toBe(true);
    const again = await startDevServer(options(dirA));
    expect(again).toMatchObject({ spawned: false, address: `127.0.0.1:${port}` });
  });

  it('a second marketplace (another data directory) on the same port refuses to start, saying why and what to do', async () => {
    const err = await startDevServer(options(dirB)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DevServerError);
    expect((err as Error).message).toBe(
      `Port ${port} already has the Temporal dev server of another marketplace (its state is ` +
        `${path.join(dirA, 'temporal.db')}; ours would be ${path.join(dirB, 'temporal.db')}). Sharing it would run ` +
        `each one's workflows and activities against the other's database. Stop the other marketplace, or give this ` +
        `marketplace free ports with TEMPORAL_DEV_PORT and TEMPORAL_UI_PORT.`,
    );
  });

  it('the real launcher of that second marketplace exits with just that message', async () => {
    const err = await startProcess({
      roles: ['all'],
      env: { DATA_DIR: dirB, TEMPORAL_DEV_PORT: String(port), TEMPORAL_UI_PORT: String(uiPort), LOG_LEVEL: 'warn' },
      readyTimeoutMs: 60_000,
    }).catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(Error);
    const message = (err as Error).message;
    expect(message).toContain('process exited with 1');
    expect(message).toContain(`Port ${port} already has the Temporal dev server of another marketplace`);
    expect(message).not.toContain('    at '); // a message for a person, not a stack trace
  }, 90_000);

  it('a Temporal dev server this marketplace did not start is refused too', async () => {
    const foreign = await startTemporal();
    try {
      const foreignPort = Number(foreign.address.split(':')[1]);
      const err = await startDevServer({ ...options(dirB), port: foreignPort }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DevServerError);
      expect((err as Error).message).toMatch(
        new RegExp(
          `^Port ${foreignPort} already has a Temporal server that this marketplace did not start \\(its namespace ` +
            `"default" does not carry our mark\\)\\. .* set TEMPORAL_ADDRESS to use that server on purpose\\.$`,
        ),
      );
      const missing = await startDevServer({ ...options(dirB), port: foreignPort, namespace: 'ours' }).catch(
        (e: unknown) => e,
      );
      expect((missing as Error).message).toContain('(it has no namespace "ours")');
    } finally {
      await foreign.env.teardown();
    }
  }, 60_000);
});
