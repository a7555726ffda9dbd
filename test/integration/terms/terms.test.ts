// Legal documents and terms: create, activate (a new version supersedes), snapshot, and acceptance by a person.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../../core/crypto.js';
import { Api } from '../../../db/entities/index.js';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { expectFailure, http, describe as show } from '../../helpers/http.js';
import { startFullStack, type FullStack } from '../../helpers/full-stack.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';

const TERMS_V1 = '# Terms of Weather\n\n1. Be nice.\n2. No scraping.\n';
const TERMS_V2 = '# Terms of Weather\n\n1. Be nice.\n2. No scraping.\n3. Cite us.\n';

describe('documents and terms', () => {
  let s: FullStack;
  let upstream: Upstream;
  let provider: Person;
  let consumer: Person;
  let apiId: string;

  beforeAll(async () => {
    upstream = await startUpstream();
    s = await startFullStack({ env: { UPSTREAM_ALLOW_PRIVATE: 'true' } });
    provider = await createPerson(s.services);
    consumer = await createPerson(s.services);
    const created = await http(s.base, 'POST', '/v1/provider/apis', {
      token: provider.session,
      body: {
        name: 'Weather',
        slug: 'weather-terms',
        summary: 's',
        base_url: upstream.url,
        endpoints: [{ method: 'GET', path: '/now' }],
      },
    });
    apiId = created.body.data.api_id;
    expect(
      (
        await http(s.base, 'POST', `/v1/provider/apis/${apiId}/publish`, {
          token: provider.session,
          body: { accept_terms: true },
        })
      ).body.data.status,
    ).toBe('live');
  });
  afterAll(async () => {
    // Every money test file ends with the books consistent (each org's cached balance = its ledger sum).
    expect(await s.services.ledger.findDrift()).toEqual([]);
    await s?.close();
    await upstream?.close();
  });

  const createDoc = (body: string, version: string, extra: Record<string, unknown> = {}) =>
    http(s.base, 'POST', '/v1/provider/documents', {
      token: provider.session,
      body: { kind: 'terms', source: 'hosted', version, body, api_id: apiId, acceptance_mode: 'required', ...extra },
    });

  it('creates a draft, activates it, serves the exact text, and supersedes it with a new version', async () => {
    const created = await createDoc(TERMS_V1, '1.0', { title: 'Terms of Weather' });
    expect(created.status, show(created)).toBe(201);
    const v1 = created.body.data;
    expect(v1).toMatchObject({
      kind: 'terms',
      source: 'hosted',
      version: '1.0',
      status: 'draft',
      content_hash: sha256Hex(TERMS_V1),
      api_id: apiId,
      acceptance_mode: 'required',
    });
    expect(v1.snapshot_url).toMatch(new RegExp(`/v1/documents/${v1.document_id}/snapshot$`));
    expectFailure(await http(s.base, 'GET', `/v1/documents/${v1.document_id}/snapshot`), 404, 'not_found');
    expect((await http(s.base, 'GET', '/v1/apis/weather-terms/terms')).body.data.documents).toEqual([]);

    const activated = await http(s.base, 'POST', `/v1/provider/documents/${v1.document_id}/activate`, {
      token: provider.session,
    });
    expect(activated.body.data).toMatchObject({ status: 'active', activated_at: expect.any(String) });
    const snap = await fetch(`${s.base}/v1/documents/${v1.document_id}/snapshot`);
    expect(snap.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    expect(snap.headers.get('x-content-hash')).toBe(sha256Hex(TERMS_V1));
    expect(await snap.text()).toBe(TERMS_V1);

    const terms = await http(s.base, 'GET', '/v1/apis/weather-terms/terms');
    expect(terms.body.data).toMatchObject({
      api: 'weather-terms',
      all_required_accepted: null,
      approval_url: expect.stringMatching(/\/terms\/weather-terms$/),
    });
    expect(terms.body.data.documents.map((d: { document_id: string }) => d.document_id)).toEqual([v1.document_id]);
    const listing = await http(s.base, 'GET', '/v1/apis/weather-terms');
    expect(listing.body.data.terms.required).toBe(true);

    const v2 = (await createDoc(TERMS_V2, '2.0')).body.data;
    await http(s.base, 'POST', `/v1/provider/documents/${v2.document_id}/activate`, { token: provider.session });
    const docs = await http(s.base, 'GET', `/v1/provider/documents?api_id=${apiId}&kind=terms`, {
      token: provider.session,
    });
    expect(docs.body.data.map((d: { version: string; status: string }) => [d.version, d.status])).toEqual([
      ['1.0', 'superseded'],
      ['2.0', 'active'],
    ]);
    expect(
      (await http(s.base, 'GET', '/v1/apis/weather-terms/terms')).body.data.documents.map(
        (d: { version: string }) => d.version,
      ),
    ).toEqual(['2.0']);
    // A superseded version's text stays readable (acceptances pinned it); it cannot be activated again.
    expect(await (await fetch(`${s.base}/v1/documents/${v1.document_id}/snapshot`)).text()).toBe(TERMS_V1);
    expectFailure(
      await http(s.base, 'POST', `/v1/provider/documents/${v1.document_id}/activate`, { token: provider.session }),
      409,
      'conflict',
    );
  });

  it('is accepted by a person (session of a verified owner or admin), not by an API key', async () => {
    const doc = (await http(s.base, 'GET', '/v1/apis/weather-terms/terms')).body.data.documents[0];
    const accept = (token: string, body: unknown) =>
      http(s.base, 'POST', '/v1/apis/weather-terms/terms/accept', { token, body });
    const body = { document_id: doc.document_id, content_hash: doc.content_hash };

    const byKey = await accept(consumer.apiKey, body);
    expectFailure(byKey, 403, 'forbidden');
    expect(byKey.body.error.details).toEqual({ required_credential: 'session' });

    const wrongHash = await accept(consumer.session, { ...body, content_hash: sha256Hex(TERMS_V1) });
    expectFailure(wrongHash, 400, 'validation_failed');
    expect(wrongHash.body.error.details.expected_content_hash).toBe(doc.content_hash);

    const member = await createPerson(s.services, { orgId: consumer.orgId, role: 'member' });
    expectFailure(await accept(member.session, body), 403, 'forbidden');
    const unverified = await createPerson(s.services, { verified: false });
    expectFailure(await accept(unverified.session, body), 403, 'forbidden');
    expectFailure(
      await accept(consumer.session, { document_id: 'doc_00000000000000000000000000', content_hash: doc.content_hash }),
      404,
      'not_found',
    );

    const ok = await accept(consumer.session, body);
    expect(ok.status, show(ok)).toBe(200);
    expect(ok.body.data).toEqual({
      accepted: true,
      document_id: doc.document_id,
      content_hash: doc.content_hash,
      accepted_at: expect.any(String),
    });
    const again = await accept(consumer.session, body);
    expect(again.body.data.accepted_at).toBe(ok.body.data.accepted_at);

    const status = await http(s.base, 'GET', '/v1/apis/weather-terms/terms', { token: consumer.apiKey });
    expect(status.body.data).toMatchObject({ all_required_accepted: true, documents: [{ accepted: true }] });
    const em = s.services.orm.em.fork();
    const api = await em.findOneOrFail(Api, apiId);
    expect(await s.services.documents.unacceptedRequired(em, api, consumer.orgId)).toEqual([]);
    const pending = await s.services.documents.unacceptedRequired(
      em,
      api,
      member.orgId === consumer.orgId ? unverified.orgId : member.orgId,
    );
    expect(pending).toEqual([
      {
        document_id: doc.document_id,
        content_hash: doc.content_hash,
        snapshot_url: doc.snapshot_url,
        approval_url: expect.stringMatching(/\/terms\/weather-terms$/),
      },
    ]);
  });

  it('lets the provider accept for its own org by api_id', async () => {
    const doc = (await http(s.base, 'GET', '/v1/apis/weather-terms/terms')).body.data.documents[0];
    const res = await http(s.base, 'POST', `/v1/provider/apis/${apiId}/terms/accept`, {
      token: provider.session,
      body: { document_id: doc.document_id, content_hash: doc.content_hash },
    });
    expect(res.status, show(res)).toBe(200);
    expectFailure(
      await http(s.base, 'POST', `/v1/provider/apis/${apiId}/terms/accept`, {
        token: consumer.session,
        body: { document_id: doc.document_id, content_hash: doc.content_hash },
      }),
      404,
      'not_found',
    );
  });

  it('refuses bad documents with 400 and another org’s api_id with 404', async () => {
    for (const body of [
      { kind: 'terms', version: '1', body: '' },
      { kind: 'contract', version: '1', body: 'x' },
      { kind: 'terms', version: '1', body: 'x', source: 'external' },
      { kind: 'terms', version: '1', body: 'x', acceptance_mode: 'maybe' },
      { kind: 'terms', version: '', body: 'x' },
      { kind: 'terms', version: '1', body: 'x', content_hash: 'abc' },
    ]) {
      expectFailure(
        await http(s.base, 'POST', '/v1/provider/documents', { token: provider.session, body }),
        400,
        'validation_failed',
      );
    }
    expectFailure(
      await http(s.base, 'POST', '/v1/provider/documents', {
        token: consumer.session,
        body: { kind: 'terms', version: '1', body: 'x', api_id: apiId },
      }),
      404,
      'not_found',
    );
  });

  it('the /terms page shows the text, sends anonymous readers to sign in, and records acceptance by form', async () => {
    const anonymous = await fetch(`${s.base}/terms/weather-terms`);
    const page = await anonymous.text();
    expect(anonymous.status).toBe(200);
    expect(page).toContain('3. Cite us.');
    expect(page).toContain('/login?next=%2Fterms%2Fweather-terms');

    const person = await createPerson(s.services);
    const withCookie = await fetch(`${s.base}/terms/weather-terms`, {
      headers: { cookie: `svc_session=${person.session}` },
    });
    const csrf = /svc_csrf=([0-9A-Za-z]{32})/.exec(withCookie.headers.get('set-cookie') ?? '')![1]!;
    const html = await withCookie.text();
    const document = /name="document" value="([^"]+)"/.exec(html)![1]!;
    const posted = await fetch(`${s.base}/terms/weather-terms`, {
      method: 'POST',
      headers: {
        cookie: `svc_session=${person.session}; svc_csrf=${csrf}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ csrf, document }).toString(),
    });
    expect(posted.status).toBe(200);
    expect(await posted.text()).toContain('Accepted for your organization');
    const status = await http(s.base, 'GET', '/v1/apis/weather-terms/terms', { token: person.apiKey });
    expect(status.body.data.all_required_accepted).toBe(true);
  });
});
