// The auto-reload trigger is at least once: an org's reload mark (set by the ledger when a debit crosses the
// threshold) is cleared only after its autoReloadWorkflow was signal-with-started. While a start is in flight (a worker
// that dies there loses nothing) and after a start Temporal refused, the mark stays as it was; a later pass starts the
// reload and clears it. Real Postgres and the Temporal dev server (no worker: a started run just waits for one).
import net from 'node:net';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReloadTrigger, type ReloadTrigger } from '../../core/billing/reload-trigger.js';
import { createLogger } from '../../core/logger.js';
import { workflowIds } from '../../core/temporal/contracts.js';
import { TemporalService } from '../../core/temporal/temporal.service.js';
import { createPerson } from '../helpers/accounts.js';
import { sql } from '../helpers/db.js';
import { createTestStack, type TestStack } from '../helpers/services.js';
import { startTemporal } from '../helpers/temporal.js';

/** A TCP proxy to `target` that can hold back what clients send (the connection stays open, nothing is lost). */
async function startPausableProxy(target: string) {
  const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];
  let paused = false;
  const held: (() => void)[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(port, host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
    }
    client.on('data', (chunk: Buffer) => {
      if (paused || held.length) held.push(() => upstream.write(chunk));
      else upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    pause: () => {
      paused = true;
    },
    resume: () => {
      paused = false;
      for (const send of held.splice(0)) send();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('auto-reload trigger', () => {
  let temporal: TestWorkflowEnvironment;
  let stack: TestStack;
  const silent = createLogger({ level: 'silent' });

  beforeAll(async () => {
    const started = await startTemporal();
    temporal = started.env;
    stack = await createTestStack({ temporalAddress: started.address });
  });
  afterAll(async () => {
    expect(await stack.services.ledger.findDrift()).toEqual([]);
    await stack?.close();
    await temporal?.teardown();
  });

  const markOf = async (orgId: string) =>
    (
      await sql<{ mark: string | null }>(
        stack.db.url,
        'select reload_requested_at::text as mark from orgs where id = $1',
        [orgId],
      )
    )[0]!.mark;

  it('keeps the mark through an in-flight and a refused start, and clears it once a later pass starts the reload', async () => {
    const person = await createPerson(stack.services);
    await sql(
      stack.db.url,
      'update orgs set auto_reload_enabled = true, auto_reload_threshold_cents = 100, auto_reload_amount_cents = 500 where id = $1',
      [person.orgId],
    );
    await stack.services.ledger.post({ orgId: person.orgId, kind: 'grant', amountCents: 150 });
    await stack.services.ledger.post({ orgId: person.orgId, kind: 'usage', amountCents: -60 }); // 150 -> 90: marked
    const mark = await markOf(person.orgId);
    expect(mark).not.toBeNull();
    const triggers: ReloadTrigger[] = [];
    // Passes run by hand (tick); the interval is out of the way.
    const trigger = (service: TemporalService) => {
      const t = startReloadTrigger({ ...stack.services, temporal: service }, 3_600_000);
      triggers.push(t);
      return t;
    };

    // Temporal refuses the start (no such namespace): the mark stays exactly as it was (its place in the queue too).
    const refusing = new TemporalService(
      { address: stack.services.temporal.target.address, namespace: 'no-such-namespace', taskQueue: 'q' },
      silent,
    );
    let started: number;
    try {
      started = await trigger(refusing).tick();
    } finally {
      await refusing.close();
    }
    expect(await markOf(person.orgId)).toBe(mark);
    expect(started).toBe(0);
    await expect(temporal.client.workflow.getHandle(workflowIds.autoReload(person.orgId)).describe()).rejects.toThrow(
      /not found/i,
    );

    // A later pass, through a connection held up in the middle of the start (as when a worker dies there): until
    // Temporal has answered, the mark is still there for the next worker; once the reload is started, it is cleared.
    const proxy = await startPausableProxy(stack.services.temporal.target.address);
    const slow = new TemporalService({ ...stack.services.temporal.target, address: proxy.address }, silent);
    try {
      proxy.pause();
      const pass = trigger(slow).tick();
      await new Promise((r) => setTimeout(r, 700));
      expect(await markOf(person.orgId)).toBe(mark);
      proxy.resume();
      expect(await pass).toBe(1);
    } finally {
      await slow.close();
      await proxy.close();
    }
    expect(await markOf(person.orgId)).toBeNull();
    const run = await temporal.client.workflow.getHandle(workflowIds.autoReload(person.orgId)).describe();
    expect(run.type).toBe('autoReloadWorkflow');
    expect(run.status.name).toBe('RUNNING');
    await Promise.all(triggers.map((t) => t.stop()));
  });
});
