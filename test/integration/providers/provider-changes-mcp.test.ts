// A provider's endpoint changes and retirement as agent tools (provider_change_endpoints, provider_publish,
// provider_retire_api), with the MCP SDK's client over the real HTTP server on a full stack (Temporal with our
// worker): a draft changes at once, a live API stages a revision (shown, discarded, published); and an agent that
// installed a removed endpoint as its own tool sees it leave its tools/list at the sunset, told by
// notifications/tools/list_changed.
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { announceToolsChanged } from '../../../mcp/installed-tools.js';
import { workflowIds } from '../../../core/temporal/contracts.js';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { expectFailure, http } from '../../helpers/http.js';
import { startFullStack, type FullStack } from '../../helpers/full-stack.js';
import { creditOf, erasOf, LEGACY, ok, refused, textOf, type Data } from '../../helpers/mcp-eras.js';
import { serveMcp, type ServedMcp } from '../../helpers/mcp-served.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';

const NOTICE_MS = 6_000;

describe('provider change tools, and installed tools of a removed endpoint', () => {
  let s: FullStack;
  let served: ServedMcp;
  let upstream: Upstream;
  let provider: Person;

  beforeAll(async () => {
    upstream = await startUpstream();
    s = await startFullStack({
      schedules: false,
      env: { UPSTREAM_ALLOW_PRIVATE: 'true', PRICE_INCREASE_NOTICE_DAYS: String(NOTICE_MS / 86_400_000) },
    });
    served = await serveMcp(s.services);
    provider = await createPerson(s.services);
  });
  afterAll(async () => {
    await served?.close();
    await s?.services.earnings.foldAll();
    expect(await s?.services.ledger.findDrift()).toEqual([]);
    await s?.close();
    await upstream?.close();
  });

  const { connect, creditedPerson } = erasOf(
    () => s,
    () => served,
    'provider-changes',
  );

  async function createLive(agent: Client, slug: string): Promise<{ apiId: string; ids: Record<string, string> }> {
    const created = await ok(agent, 'provider_create_api', {
      body: {
        name: slug,
        slug,
        summary: 'Changed by an agent',
        base_url: upstream.url,
        endpoints: [
          { method: 'GET', path: '/a', price_cents: 1 },
          { method: 'GET', path: '/b', price_cents: 1 },
        ],
      },
    });
    const apiId = created.api_id as string;
    expect(await ok(agent, 'provider_publish', { api_id: apiId, accept_terms: true })).toMatchObject({
      status: 'live',
    });
    const ids = Object.fromEntries((created.endpoints as Data[]).map((e) => [e.path, e.endpoint_id]));
    return { apiId, ids };
  }

  it('changes a draft at once, stages a live API in a revision, and retires APIs', async () => {
    const agent = await connect(LEGACY, provider.apiKey);
    const draft = await ok(agent, 'provider_create_api', {
      body: {
        name: 'T',
        slug: 'tool-draft',
        summary: 's',
        base_url: upstream.url,
        endpoints: [{ method: 'GET', path: '/a' }],
      },
    });
    const changed = await ok(agent, 'provider_change_endpoints', {
      api_id: draft.api_id,
      add: [{ method: 'GET', path: '/b', price_cents: 2 }],
      update: [{ endpoint_id: draft.endpoints[0].endpoint_id, summary: 'The a' }],
    });
    expect(changed).toMatchObject({
      staged: false,
      added: [{ path: '/b', price_cents: 2 }],
      updated: [{ path: '/a', summary: 'The a' }],
    });
    const bad = await refused(
      agent,
      'provider_change_endpoints',
      { api_id: draft.api_id, add: [{ method: 'GET', path: 'nope' }] },
      'validation_failed',
    );
    expect(JSON.stringify(bad.details)).toContain('add.0.path');
    expect(await ok(agent, 'provider_retire_api', { api_id: draft.api_id, action: 'delete' })).toMatchObject({
      deleted: true,
    });

    const { apiId, ids } = await createLive(agent, 'tool-live');
    const staged = await ok(agent, 'provider_change_endpoints', {
      api_id: apiId,
      add: [{ method: 'GET', path: '/c' }],
    });
    expect(staged).toMatchObject({ staged: true, revision: { number: 1, add: [{ path: '/c' }] } });
    // Only api_id: the open revision, nothing changed.
    expect(await ok(agent, 'provider_change_endpoints', { api_id: apiId })).toMatchObject({
      staged: true,
      added: [],
      revision: { number: 1 },
    });
    expect(await ok(agent, 'provider_change_endpoints', { api_id: apiId, discard_revision: true })).toMatchObject({
      revision: { number: 1, status: 'discarded' },
    });
    await ok(agent, 'provider_change_endpoints', { api_id: apiId, add: [{ method: 'GET', path: '/c' }] });
    const published = await ok(agent, 'provider_publish', { api_id: apiId, accept_terms: true });
    expect(published).toMatchObject({ action: 'publish_revision', revision_published: true });
    expect((await ok(agent, 'provider_get_api', { api_id: apiId })).endpoints.map((e: Data) => e.path)).toEqual([
      '/a',
      '/b',
      '/c',
    ]);

    const conflict = await refused(agent, 'provider_retire_api', { api_id: apiId, action: 'delete' }, 'conflict');
    expect(conflict.message).toContain('archive it');
    await refused(agent, 'provider_retire_api', { api_id: apiId, action: 'archive' }, 'conflict');
    await ok(agent, 'provider_unpublish', { api_id: apiId });
    expect(await ok(agent, 'provider_retire_api', { api_id: apiId, action: 'archive' })).toMatchObject({
      status: 'archived',
    });
    expectFailure(await http(s.base, 'GET', '/v1/apis/tool-live'), 410, 'api_archived');
    expect(await ok(agent, 'provider_retire_api', { api_id: apiId, action: 'restore' })).toMatchObject({
      status: 'draft',
    });
    expect(ids['/a']).toBeDefined();
  });

  it('takes an installed tool away at its endpoint’s sunset and sends list_changed', async () => {
    const providerAgent = await connect(LEGACY, provider.apiKey);
    const { apiId, ids } = await createLive(providerAgent, 'tool-sunset');
    const person = await creditedPerson(10);
    const agent = await connect(LEGACY, person.apiKey);
    // Only /b: once it goes, the key has no tool of the listing left, so it is told by key, not by listing.
    await ok(agent, 'add_api_tools', { slug: 'tool-sunset', endpoints: ['GET /b'] });
    const installed = async () =>
      (await agent.listTools(undefined, { cacheMode: 'refresh' })).tools.filter((t) => t.name.includes('__'));
    expect((await installed()).map((t) => t.name)).toEqual(['tool-sunset__get_b']);
    await ok(agent, 'tool-sunset__get_b'); // a call: its removal waits out the notice
    expect(await creditOf(s, person.orgId)).toBe(9);

    // The 2025-11-25 session's GET stream is open once an announcement reaches it.
    let told = false;
    agent.setNotificationHandler('notifications/tools/list_changed', () => void (told = true));
    for (let i = 0; i < 100 && !told; i++) {
      await announceToolsChanged(s.services, person.keyId);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(told).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 300));

    await ok(providerAgent, 'provider_change_endpoints', { api_id: apiId, remove: [ids['/b']] });
    const published = await ok(providerAgent, 'provider_publish', { api_id: apiId, accept_terms: true });
    expect(published).toMatchObject({ action: 'publish_revision', revision_published: true });
    // During the notice the tool is still there.
    expect((await installed()).map((t) => t.name)).toEqual(['tool-sunset__get_b']);
    const changed = new Promise<void>((resolve) =>
      agent.setNotificationHandler('notifications/tools/list_changed', () => resolve()),
    );
    const removal = await s.temporal.client.workflow.getHandle(workflowIds.endpointRemoval(apiId, ids['/b']!)).result();
    expect(removal).toEqual({ removed: true });
    await changed;
    expect(await installed()).toEqual([]);
    const gone = await agent.callTool({ name: 'tool-sunset__get_b', arguments: {} }).then(
      (r) => textOf(r),
      (err: Error) => err.message,
    );
    expect(gone).toContain('Tool tool-sunset__get_b not found');
    expect(await creditOf(s, person.orgId)).toBe(9);
  });
});
