// The stores the all-in-one's two threads share on the embedded defaults (platform/remote-stores.ts), over a
// real MessageChannel with Comlink: the gateway thread's memory spend store as the main thread calls it, and the main
// thread's counters as the gateway thread calls them (pub/sub both ways, unsubscribe).
import { MessageChannel } from 'node:worker_threads';
import * as Comlink from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryCounterStore } from '../../core/counters/memory-store.js';
import { MemorySpendStore } from '../../core/spend/memory-spend-store.js';
import { countersPort, RemoteCounterStore, RemoteSpendStore, type CountersPort } from '../../platform/remote-stores.js';

const channels: MessageChannel[] = [];
afterEach(() => {
  for (const c of channels.splice(0)) {
    c.port1.close();
    c.port2.close();
  }
});

function channel(): MessageChannel {
  const c = new MessageChannel();
  channels.push(c);
  return c;
}

describe('RemoteSpendStore', () => {
  it("forwards calls made before and after attach to the gateway thread's store, with their answers", async () => {
    const store = new MemorySpendStore();
    const c = channel();
    Comlink.expose({ spend: store }, nodeEndpoint(c.port2));
    const remote = new RemoteSpendStore();
    const early = remote.pendingUsage('org_a'); // before the thread is up
    remote.attach(Comlink.wrap<{ spend: never }>(nodeEndpoint(c.port1)).spend);
    expect(await early).toBe(0);
    expect(await remote.idempotencyRecord('nope')).toBeNull();
    await remote.addSeen([{ orgId: 'org_a', hash: 'h1' }]);
    const epoch = await remote.seenEpoch('org_a');
    expect(epoch).toBe(await store.seenEpoch('org_a'));
    await expect(remote.keysChanged('org_a')).resolves.toBeUndefined();
    await expect(remote.forgetOrg('org_a')).resolves.toBeUndefined();
  });
});

describe('RemoteCounterStore', () => {
  it("reads and writes the main thread's counters and hears its publications until it unsubscribes", async () => {
    const counters = new MemoryCounterStore();
    const c = channel();
    Comlink.expose(countersPort(counters), nodeEndpoint(c.port2));
    const remote = new RemoteCounterStore(Comlink.wrap<CountersPort>(nodeEndpoint(c.port1)));

    await remote.set('k', 'v');
    expect(await counters.get('k')).toBe('v');
    expect(await remote.incrBy('n', 3)).toBe(3);
    expect((await remote.hitWindow('w', 1, 60_000)).allowed).toBe(true);
    expect((await counters.hitWindow('w', 1, 60_000)).allowed).toBe(false);

    const heard: string[] = [];
    const unsubscribe = await remote.subscribe('gateway:org', (m) => heard.push(m));
    await counters.publish('gateway:org', 'org_1'); // the control plane announces
    await remote.publish('gateway:org', 'org_2'); // the gateway thread announces
    await expect.poll(() => heard).toEqual(['org_1', 'org_2']);
    await unsubscribe();
    await counters.publish('gateway:org', 'org_3');
    await new Promise((r) => setTimeout(r, 50));
    expect(heard).toEqual(['org_1', 'org_2']);
  });
});
