// Providers change, version and retire what they list (issue 31, section 2), over REST, real Temporal, Postgres, the
// gateway and a loopback upstream: a draft's endpoints change at once (add, change, a new path is a new endpoint,
// remove, re-import by method and path); a never-live draft is deleted, an ever-live one only archived (410
// api_archived on REST, the quote and the gateway, gone from search, history and books kept, slug kept from other
// orgs, restorable); a live API's changes are staged in a revision that verifyAndPublishWorkflow publishes (a failed
// smoke test keeps it open and names host:port); a removal waits out the notice with Deprecation and Sunset headers,
// then answers 410 endpoint_removed (at once for an endpoint without a call in 30 days); a price increase on an
// unpublished ever-live draft keeps its notice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatewayHandler, type GatewayHandler } from '../../../gateway/app.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { workflowIds } from '../../../core/temporal/contracts.js';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { sql } from '../../helpers/db.js';
import { createConsumer } from '../../helpers/fixtures.js';
import { expectFailure, http, serve, describe as show } from '../../helpers/http.js';
import { startFullStack, type FullStack } from '../../helpers/full-stack.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';

// Long enough for the steps a test takes during a notice on a loaded machine, short enough to wait out.
const NOTICE_MS = 8_000;

/** An OpenAPI 3.1 document with these GET operations (summary = the path's words). */
function openApi(paths: string[]): string {
  const ops = Object.fromEntries(
    paths.map((p) => [p, { get: { summary: `Get ${p.slice(1)}`, responses: { 200: { description: 'ok' } } } }]),
  );
  return JSON.stringify({ openapi: '3.1.0', info: { title: 'T', version: '1' }, paths: ops });
}

describe('provider changes: endpoints, revisions, removals, archive', () => {
  let s: FullStack;
  let upstream: Upstream;
  let gateway: GatewayHandler;
  let gw: RunningHttpServer;
  let provider: Person;
  let consumer: Person;
  let doc = openApi(['/x', '/y']);

  beforeAll(async () => {
    upstream = await startUpstream((req, res) => {
      if (req.url === '/openapi.json') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(doc);
        return;
      }
      const broken = req.url?.startsWith('/broken');
      res.writeHead(broken ? 500 : 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ path: req.url }));
    });
    s = await startFullStack({
      schedules: false,
      env: { UPSTREAM_ALLOW_PRIVATE: 'true', PRICE_INCREASE_NOTICE_DAYS: String(NOTICE_MS / 86_400_000) },
    });
    gateway = createGatewayHandler(s.services);
    gw = await serve(gateway);
    provider = await createPerson(s.services);
    consumer = await createConsumer(s.services, 500);
  });
  afterAll(async () => {
    await gateway?.drain.flush();
    await s?.services.earnings.foldAll();
    // Every money test file ends with the books consistent (each org's cached balance = its ledger sum).
    expect(await s?.services.ledger.findDrift()).toEqual([]);
    await gw?.close();
    await gateway?.close();
    await s?.close();
    await upstream?.close();
  });

  const api = (method: string, p: string, body?: unknown, token = provider.session) =>
    http(s.base, method, p, { token, body });
  const call = (slug: string, p: string, method = 'GET') =>
    http(gw.url, method, `/v1/proxy/${slug}${p}`, { token: consumer.apiKey });
  const byPath = (endpoints: { path: string; endpoint_id: string }[]) =>
    Object.fromEntries(endpoints.map((e) => [e.path, e.endpoint_id]));

  async function draft(slug: string, endpoints: unknown[], extra: Record<string, unknown> = {}) {
    const res = await api('POST', '/v1/provider/apis', {
      name: slug,
      slug,
      summary: 'Changing API',
      base_url: upstream.url,
      endpoints,
      ...extra,
    });
    expect(res.status, show(res)).toBe(201);
    return res.body.data as { api_id: string; endpoints: { path: string; endpoint_id: string }[] };
  }

  async function live(slug: string, endpoints: unknown[], extra: Record<string, unknown> = {}) {
    const created = await draft(slug, endpoints, extra);
    const published = await api('POST', `/v1/provider/apis/${created.api_id}/publish`, { accept_terms: true });
    expect(published.body.data.status, show(published)).toBe('live');
    return created;
  }

  /** The runs of `publish:{apiId}` and the activities each scheduled, oldest first. */
  async function publishRuns(apiId: string): Promise<string[][]> {
    const runs: string[][] = [];
    for await (const wf of s.temporal.client.workflow.list({ query: `WorkflowId = "${workflowIds.publish(apiId)}"` })) {
      const history = await s.temporal.client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
      runs.unshift(
        (history.events ?? []).flatMap((e) =>
          e.activityTaskScheduledEventAttributes?.activityType?.name
            ? [e.activityTaskScheduledEventAttributes.activityType.name]
            : [],
        ),
      );
    }
    return runs;
  }

  it("changes a never-live draft's endpoints at once, and deletes the draft", async () => {
    const created = await draft('chg-draft', [
      { method: 'GET', path: '/a', price_cents: 3 },
      { method: 'GET', path: '/b' },
    ]);
    const ids = byPath(created.endpoints);
    const base = `/v1/provider/apis/${created.api_id}`;

    const added = await api('POST', `${base}/endpoints`, { method: 'post', path: '/c', summary: 'Make a c' });
    expect(added.status, show(added)).toBe(201);
    expect(added.body.data).toMatchObject({
      staged: false,
      revision: null,
      added: [{ method: 'POST', path: '/c', summary: 'Make a c', price_cents: 0 }],
    });
    const c = added.body.data.added[0].endpoint_id as string;

    const schema = { type: 'object', properties: { query: { type: 'object', properties: { q: { type: 'string' } } } } };
    const changed = await api('PATCH', `${base}/endpoints/${ids['/b']}`, { summary: 'Bee', input_schema: schema });
    expect(changed.body.data.updated, show(changed)).toEqual([
      expect.objectContaining({ endpoint_id: ids['/b'], summary: 'Bee', input_schema: schema }),
    ]);
    // A new path is a removal plus an addition; the new endpoint keeps the price.
    const moved = await api('PATCH', `${base}/endpoints/${ids['/a']}`, { path: '/a2' });
    expect(moved.body.data, show(moved)).toMatchObject({
      removed: [{ endpoint_id: ids['/a'], path: '/a', effect: 'deleted' }],
      added: [{ path: '/a2', price_cents: 3 }],
    });
    expect(moved.body.data.added[0].endpoint_id).not.toBe(ids['/a']);

    // Refusals name their field.
    const taken = await api('POST', `${base}/endpoints`, { method: 'GET', path: '/b' });
    expectFailure(taken, 409, 'conflict');
    expect(taken.body.error.details).toMatchObject({ field: 'path', endpoint_id: ids['/b'] });
    const unknown = await api('PATCH', `${base}/endpoints/ep_nope`, { summary: 'x' });
    expectFailure(unknown, 404, 'not_found');
    expect(unknown.body.error.details.field).toBe('endpoint_id');
    expectFailure(await api('PATCH', `${base}/endpoints/${c}`, {}), 400, 'validation_failed');

    const removed = await api('DELETE', `${base}/endpoints/${c}`);
    expect(removed.body.data.removed).toEqual([
      { endpoint_id: c, method: 'POST', path: '/c', effect: 'deleted', sunset_at: null },
    ]);
    const now = await api('GET', base);
    expect(now.body.data.endpoints.map((e: { path: string }) => e.path).sort()).toEqual(['/a2', '/b']);
    expect(await sql(s.db.url, 'select id from removed_endpoints where api_id = $1', [created.api_id])).toEqual([]);

    const deleted = await api('DELETE', base);
    expect(deleted.body.data, show(deleted)).toEqual({ api_id: created.api_id, slug: 'chg-draft', deleted: true });
    expectFailure(await api('GET', base), 404, 'not_found');
    // The slug is free again.
    await draft('chg-draft', [{ method: 'GET', path: '/a' }]);
  });

  it('re-imports from OpenAPI: matched keep id and price, new ones at 0, missing ones removed unless kept', async () => {
    doc = openApi(['/x', '/y']);
    const created = await draft('chg-import', [], {
      import_from: { type: 'openapi_url', url: `${upstream.url}/openapi.json` },
    });
    const ids = byPath(created.endpoints);
    const base = `/v1/provider/apis/${created.api_id}`;
    await api('PATCH', `${base}/pricing`, { endpoints: [{ endpoint_id: ids['/x'], price_cents: 4 }] });

    doc = openApi(['/x', '/z']);
    const kept = await api('POST', `${base}/import`, { url: `${upstream.url}/openapi.json`, keep_missing: true });
    expect(kept.status, show(kept)).toBe(200);
    expect(kept.body.data.removed).toEqual([]);
    expect(kept.body.data.added.map((e: { path: string }) => e.path)).toEqual(['/z']);

    doc = openApi(['/x', '/w']);
    const synced = await api('POST', `${base}/import`, { url: `${upstream.url}/openapi.json` });
    expect(synced.body.data, show(synced)).toMatchObject({
      added: [{ path: '/w', price_cents: 0 }],
      updated: [{ endpoint_id: ids['/x'], path: '/x', price_cents: 4, summary: 'Get x' }],
    });
    expect(synced.body.data.removed.map((r: { path: string }) => r.path).sort()).toEqual(['/y', '/z']);
    const after = await api('GET', base);
    expect(after.body.data.endpoints.map((e: { path: string }) => e.path).sort()).toEqual(['/w', '/x']);
    expectFailure(
      await api('POST', `${base}/import`, { url: `${upstream.url}/missing.json` }),
      400,
      'validation_failed',
    );
  });

  it('stages a live API’s changes in a revision that the workflow publishes (or refuses, naming host:port)', async () => {
    const created = await live('chg-rev', [{ method: 'GET', path: '/a', price_cents: 1 }]);
    const base = `/v1/provider/apis/${created.api_id}`;
    const staged = await api('POST', `${base}/endpoints`, { method: 'GET', path: '/new', price_cents: 2 });
    expect(staged.status, show(staged)).toBe(201);
    expect(staged.body.data).toMatchObject({
      staged: true,
      added: [{ path: '/new', price_cents: 2 }],
      revision: { number: 1, status: 'open', add: [{ path: '/new' }] },
    });
    expect(staged.body.data.message).toContain('staged in revision 1');
    expectFailure(await call('chg-rev', '/new'), 404, 'not_found');
    await api('PATCH', `${base}/endpoints/${created.endpoints[0]!.endpoint_id}`, { summary: 'The a' });
    const shown = await api('GET', `${base}/revision`);
    expect(shown.body.data).toMatchObject({
      number: 1,
      add: [{ path: '/new' }],
      update: [{ path: '/a', summary: 'The a' }],
    });
    expect((await api('GET', base)).body.data.open_revision).toMatchObject({ number: 1, add: 1, update: 1 });

    // Discarded: nothing applies, and a new revision gets the next number.
    expect((await api('DELETE', `${base}/revision`)).body.data.status).toBe('discarded');
    expectFailure(await api('GET', `${base}/revision`), 404, 'not_found');
    const again = await api('POST', `${base}/endpoints`, { method: 'GET', path: '/new', price_cents: 2 });
    expect(again.body.data.revision.number).toBe(2);

    const published = await api('POST', `${base}/publish`, { accept_terms: true });
    expect(published.status, show(published)).toBe(200);
    expect(published.body.data).toMatchObject({
      action: 'publish_revision',
      status: 'live',
      revision_published: true,
      verification: { passed: true, checks: [{ path: '/new', ok: true }] },
    });
    // The workflow ran under the listing's business id: smoke test of the revision, then the apply.
    expect((await publishRuns(created.api_id)).at(-1)).toEqual(['smokeTestRevision', 'applyRevision']);
    const ok = await call('chg-rev', '/new');
    expect(ok.status, show(ok)).toBe(200);
    expect(ok.body.meta.cost_cents).toBe(2);

    // A revision whose new endpoint fails the smoke test stays open, and the answer names where it failed.
    await api('POST', `${base}/endpoints`, { method: 'GET', path: '/broken' });
    const refused = await api('POST', `${base}/publish`, { accept_terms: true });
    expectFailure(refused, 422, 'verification_failed');
    expect(refused.body.error.message).toBe(
      `Verification failed at 127.0.0.1:${upstream.port}: GET /broken: upstream answered HTTP 500. ` +
        'Revision 3 was not published.',
    );
    expect(refused.body.error.details.verification.checks[0]).toMatchObject({
      target: `127.0.0.1:${upstream.port}`,
      ok: false,
    });
    expect((await api('GET', `${base}/revision`)).body.data).toMatchObject({ number: 3, status: 'open' });
    expectFailure(await call('chg-rev', '/broken'), 404, 'not_found');
  });

  it('removes a called endpoint after the notice (Deprecation, Sunset, then 410), a quiet one at once', async () => {
    const created = await live('chg-rm', [
      { method: 'GET', path: '/keep', price_cents: 1 },
      { method: 'GET', path: '/old', price_cents: 1 },
      { method: 'GET', path: '/quiet', price_cents: 1 },
    ]);
    const ids = byPath(created.endpoints);
    const base = `/v1/provider/apis/${created.api_id}`;
    expect((await call('chg-rm', '/old')).status).toBe(200);
    await gateway.drain.flush();

    await api('DELETE', `${base}/endpoints/${ids['/old']}`);
    const staged = await api('DELETE', `${base}/endpoints/${ids['/quiet']}`);
    expect(staged.body.data.removed).toEqual([
      { endpoint_id: ids['/quiet'], method: 'GET', path: '/quiet', effect: 'staged', sunset_at: null },
    ]);
    // Staged: nothing changed yet for callers (no call made here: /quiet must stay without calls).
    const listedBefore = (await http(s.base, 'GET', '/v1/apis/chg-rm/endpoints')).body.data as { removal: null }[];
    expect(listedBefore.map((e) => e.removal)).toEqual([null, null, null]);
    const before = Date.now();
    const published = await api('POST', `${base}/publish`, { accept_terms: true });
    expect(published.body.data, show(published)).toMatchObject({ action: 'publish_revision', verification: null });

    // No call in 30 days: removed at once.
    const quiet = await call('chg-rm', '/quiet');
    expectFailure(quiet, 410, 'endpoint_removed');
    expect(quiet.body.error.details).toMatchObject({ method: 'GET', path: '/quiet', removed_at: expect.any(String) });

    // Called recently: still answering, with the announcement and the sunset.
    const [row] = await sql<{ removal_announced_at: Date; sunset_at: Date }>(
      s.db.url,
      'select removal_announced_at, sunset_at from endpoints where id = $1',
      [ids['/old']],
    );
    expect(row!.sunset_at.getTime() - row!.removal_announced_at.getTime()).toBe(NOTICE_MS);
    expect(row!.removal_announced_at.getTime()).toBeGreaterThanOrEqual(before - 1_000);
    const old = await call('chg-rm', '/old');
    expect(old.status, show(old)).toBe(200);
    expect(old.headers.get('deprecation')).toBe(`@${Math.floor(row!.removal_announced_at.getTime() / 1000)}`);
    expect(old.headers.get('sunset')).toBe(row!.sunset_at.toUTCString());
    expect((await call('chg-rm', '/keep')).headers.get('sunset')).toBeNull();
    const removal = { announced_at: row!.removal_announced_at.toISOString(), sunset_at: row!.sunset_at.toISOString() };
    const rows = (await http(s.base, 'GET', '/v1/apis/chg-rm/endpoints')).body.data as { path: string }[];
    expect(rows.map((r) => r.path)).toEqual(['/keep', '/old']);
    expect(rows[1]).toMatchObject({ removal });
    const quote = await http(s.base, 'GET', '/v1/apis/chg-rm/quote?method=GET&path=/old');
    expect(quote.body.data.endpoint.removal).toEqual(removal);

    // At the sunset the timer removes it: 410 with the date, nothing charged, gone from the listing.
    const result = await s.temporal.client.workflow
      .getHandle(workflowIds.endpointRemoval(created.api_id, ids['/old']!))
      .result();
    expect(result).toEqual({ removed: true });
    const credit = async () =>
      Number(
        (await sql<{ c: string }>(s.db.url, 'select credit_cents as c from orgs where id = $1', [consumer.orgId]))[0]!
          .c,
      );
    await gateway.drain.flush();
    const creditBefore = await credit();
    const gone = await call('chg-rm', '/old');
    expectFailure(gone, 410, 'endpoint_removed');
    expect(gone.body.error.details.removed_at).toBe(row!.sunset_at.toISOString());
    await gateway.drain.flush();
    expect(await credit()).toBe(creditBefore);
    const listed = (await http(s.base, 'GET', '/v1/apis/chg-rm')).body.data as { endpoints: { path: string }[] };
    expect(listed.endpoints.map((e) => e.path)).toEqual(['/keep']);
    expectFailure(await http(s.base, 'GET', '/v1/apis/chg-rm/quote?method=GET&path=/old'), 410, 'endpoint_removed');
    // The row is kept (its calls point at it).
    const [kept] = await sql(s.db.url, 'select path, price_cents from removed_endpoints where id = $1', [ids['/old']]);
    expect(kept).toEqual({ path: '/old', price_cents: '1' });
    // Its two calls (before and during the notice) are kept and point at it; the 410 was no call.
    expect(await sql(s.db.url, 'select 1 from usage_events where endpoint_id = $1', [ids['/old']])).toHaveLength(2);

    // The same method and path can be added again.
    await api('POST', `${base}/endpoints`, { method: 'GET', path: '/old', price_cents: 1 });
    expect((await api('POST', `${base}/publish`, { accept_terms: true })).body.data.revision_published).toBe(true);
    expect((await call('chg-rm', '/old')).status).toBe(200);
  });

  it('withdraws an announced removal when the endpoint is added again before its sunset', async () => {
    const created = await live('chg-revive', [{ method: 'GET', path: '/r', price_cents: 1 }]);
    const r = created.endpoints[0]!.endpoint_id;
    const base = `/v1/provider/apis/${created.api_id}`;
    expect((await call('chg-revive', '/r')).status).toBe(200);
    await gateway.drain.flush();
    await api('DELETE', `${base}/endpoints/${r}`);
    await api('POST', `${base}/publish`, { accept_terms: true });
    expect((await api('GET', base)).body.data.endpoints[0].removal).not.toBeNull();
    await api('POST', `${base}/endpoints`, { method: 'GET', path: '/r', summary: 'Kept' });
    expect((await api('POST', `${base}/publish`, { accept_terms: true })).body.data.revision_published).toBe(true);
    const kept = (await api('GET', base)).body.data.endpoints;
    expect(kept).toEqual([expect.objectContaining({ endpoint_id: r, summary: 'Kept', removal: null, price_cents: 1 })]);
    const timer = await s.temporal.client.workflow.getHandle(workflowIds.endpointRemoval(created.api_id, r)).describe();
    expect(timer.status.name).toBe('CANCELLED');
    const answer = await call('chg-revive', '/r');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('sunset')).toBeNull();
  });

  it('applies an open revision to the draft when the API is unpublished (a draft changes at once)', async () => {
    const created = await live('chg-unpub', [
      { method: 'GET', path: '/a' },
      { method: 'GET', path: '/b' },
    ]);
    const ids = byPath(created.endpoints);
    const base = `/v1/provider/apis/${created.api_id}`;
    await api('POST', `${base}/endpoints`, { method: 'GET', path: '/c' });
    await api('DELETE', `${base}/endpoints/${ids['/b']}`);
    expect((await api('POST', `${base}/unpublish`)).body.data.status).toBe('draft');
    const after = (await api('GET', base)).body.data;
    expect(after.endpoints.map((e: { path: string }) => e.path)).toEqual(['/a', '/c']);
    expect(after.open_revision).toBeNull();
    // An ever-live draft's endpoint is removed, not deleted: its calls will answer 410 once it is live again.
    const [gone] = await sql(s.db.url, 'select path from removed_endpoints where id = $1', [ids['/b']]);
    expect(gone).toEqual({ path: '/b' });
    await api('POST', `${base}/publish`, { accept_terms: true });
    expectFailure(await call('chg-unpub', '/b'), 410, 'endpoint_removed');
    expect((await call('chg-unpub', '/c')).status).toBe(200);
  });

  it('keeps the notice on a price increase while an ever-live API is a draft again', async () => {
    const never = await draft('chg-price-new', [{ method: 'GET', path: '/a', price_cents: 1 }]);
    const atOnce = await api('PATCH', `/v1/provider/apis/${never.api_id}/pricing`, {
      endpoints: [{ endpoint_id: never.endpoints[0]!.endpoint_id, price_cents: 9 }],
    });
    expect(atOnce.body.data.endpoints[0]).toMatchObject({ price_cents: 9, price_increase: null });

    const once = await live('chg-price', [{ method: 'GET', path: '/a', price_cents: 1 }]);
    expect((await api('POST', `/v1/provider/apis/${once.api_id}/unpublish`)).body.data.status).toBe('draft');
    const before = Date.now();
    const scheduled = await api('PATCH', `/v1/provider/apis/${once.api_id}/pricing`, {
      endpoints: [{ endpoint_id: once.endpoints[0]!.endpoint_id, price_cents: 9 }],
    });
    const e = scheduled.body.data.endpoints[0];
    expect(e, show(scheduled)).toMatchObject({ price_cents: 1, price_increase: { price_cents: 9 } });
    expect(Date.parse(e.price_increase.effective_at) - before).toBeGreaterThanOrEqual(NOTICE_MS - 1_000);
  });

  it('deletes only a never-live draft; archives a draft (410 everywhere, history kept, slug reserved), restores', async () => {
    const created = await live('chg-arch', [{ method: 'GET', path: '/a', price_cents: 2 }], {
      name: 'Quokka Tides',
      summary: 'Quokka tide tables',
    });
    const base = `/v1/provider/apis/${created.api_id}`;
    expect((await call('chg-arch', '/a')).status).toBe(200);
    await gateway.drain.flush();
    const found = async () =>
      ((await http(s.base, 'GET', '/v1/search?q=quokka')).body.data as { slug: string }[]).map((i) => i.slug);
    expect(await found()).toContain('chg-arch');

    const notDeleted = await api('DELETE', base);
    expectFailure(notDeleted, 409, 'conflict');
    expect(notDeleted.body.error.message).toContain('archive it');
    const notArchived = await api('POST', `${base}/archive`);
    expectFailure(notArchived, 409, 'conflict');
    expect(notArchived.body.error.message).toContain('unpublish it first');

    await api('POST', `${base}/unpublish`);
    const archived = await api('POST', `${base}/archive`);
    expect(archived.body.data, show(archived)).toMatchObject({ status: 'archived', archived_at: expect.any(String) });
    expectFailure(await api('DELETE', base), 409, 'conflict');

    for (const p of ['', '/endpoints', '/schema', '/quote?method=GET&path=/a']) {
      expectFailure(await http(s.base, 'GET', `/v1/apis/chg-arch${p}`), 410, 'api_archived');
    }
    const credit = async () =>
      Number(
        (await sql<{ c: string }>(s.db.url, 'select credit_cents as c from orgs where id = $1', [consumer.orgId]))[0]!
          .c,
      );
    const creditBefore = await credit();
    const gone = await call('chg-arch', '/a');
    expectFailure(gone, 410, 'api_archived');
    expect(gone.body.error.details.archived_at).toBe(archived.body.data.archived_at);
    await gateway.drain.flush();
    expect(await credit()).toBe(creditBefore);
    expect(await found()).not.toContain('chg-arch');
    // Read-only while archived.
    expectFailure(await api('POST', `${base}/endpoints`, { method: 'GET', path: '/b' }), 409, 'conflict');
    expectFailure(await api('PATCH', base, { summary: 'x' }), 409, 'conflict');

    // History kept: its call, the provider's earnings, the consumer's ledger.
    const analytics = await api('GET', '/v1/provider/analytics');
    expect(analytics.body.data.by_api).toEqual(
      expect.arrayContaining([expect.objectContaining({ slug: 'chg-arch', calls: 1, gmv_cents: 2 })]),
    );
    expect(
      await sql(s.db.url, "select 1 from usage_events where api_id = $1 and outcome = 'success'", [created.api_id]),
    ).toHaveLength(1);
    expect(await s.services.ledger.findDrift()).toEqual([]);

    // The slug stays its org's.
    const other = await createPerson(s.services);
    const taken = await api(
      'POST',
      '/v1/provider/apis',
      { name: 'x', slug: 'chg-arch', summary: 's', base_url: upstream.url },
      other.session,
    );
    expectFailure(taken, 409, 'conflict');

    const restored = await api('POST', `${base}/restore`);
    expect(restored.body.data).toMatchObject({ status: 'draft', archived_at: null });
    await api('POST', `${base}/publish`, { accept_terms: true });
    expect((await call('chg-arch', '/a')).status).toBe(200);
  });

  it('names the host and port a failed verification tried', async () => {
    const created = await draft('chg-verify', [{ method: 'GET', path: '/health' }]);
    await api('PATCH', `/v1/provider/apis/${created.api_id}`, { base_url: 'http://127.0.0.1:9' });
    const verified = await api('POST', `/v1/provider/apis/${created.api_id}/verify`);
    expect(verified.status, show(verified)).toBe(200);
    expect(verified.body.data.message).toMatch(/^Verification failed at 127\.0\.0\.1:9: GET \/health: /);
    expect(verified.body.data.verification.checks[0]).toMatchObject({ target: '127.0.0.1:9', ok: false, status: null });
    expect(verified.body.data.verification.checks[0].error).toContain('127.0.0.1:9');
    const published = await api('POST', `/v1/provider/apis/${created.api_id}/publish`, { accept_terms: true });
    expectFailure(published, 422, 'verification_failed');
    expect(published.body.error.message).toMatch(
      /^Verification failed at 127\.0\.0\.1:9: .* The API was not published\.$/,
    );
  });
});
