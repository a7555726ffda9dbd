// Approval mode: a key whose paid calls wait for a person. The gateway answers 402 with an approval_url; an owner
// approves spend (API or page); calls then draw on the approved amount and stop where it ends. Free calls need no
// approval, and a key cannot approve its own spend.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Person } from '../../helpers/accounts.js';
import { sql } from '../../helpers/db.js';
import { expectFailure, http } from '../../helpers/http.js';
import type { LiveApi } from '../../helpers/listings.js';
import { createConsumer, createPaidApi, closeAll, startServedStack, type ServedStack } from '../../helpers/fixtures.js';

describe('approval mode', () => {
  let served: ServedStack;
  let api: LiveApi;
  let owner: Person;

  beforeAll(async () => {
    served = await startServedStack();
    api = await createPaidApi(served.stack.services, {
      baseUrl: served.upstream.url,
      endpoints: [
        { method: 'GET', path: '/paid', priceCents: 5 },
        { method: 'GET', path: '/free', priceCents: 0 },
      ],
    });
    owner = await createConsumer(served.stack.services, 1_000);
    const patched = await http(served.api.url, 'PATCH', `/v1/keys/${owner.keyId}`, {
      token: owner.session,
      body: { approval_mode: true },
    });
    expect(patched.body.data).toMatchObject({ approval_mode: true, approved_cents: 0, remaining_approval_cents: 0 });
  });
  afterAll(async () => {
    await served?.gw.close();
    await served?.stack.services.earnings.foldAll();
    const report = await served?.stack.services.reconciliation.run();
    expect(report?.ok, JSON.stringify(report)).toBe(true);
    await closeAll(served?.api, served?.gateway, served?.stack, served?.upstream);
  });

  const callPaid = () => http(served.gw.url, 'GET', `/v1/proxy/${api.slug}/paid`, { token: owner.apiKey });

  it('a paid call without approval gets 402 with an approval_url; free calls pass', async () => {
    const res = await callPaid();
    expectFailure(res, 402, 'payment_required');
    expect(res.body.error.details).toMatchObject({
      reason: 'approval_required',
      approval_url: `${served.stack.config.urls.publicBase}/approve/${owner.keyId}`,
      approved_cents: 0,
      price_cents: 5,
    });
    expect((await http(served.gw.url, 'GET', `/v1/proxy/${api.slug}/free`, { token: owner.apiKey })).status).toBe(200);
  });

  it('an owner approves through the API; calls draw on it and stop where it ends', async () => {
    const approve = (token: string, cents: number) =>
      http(served.api.url, 'POST', `/v1/keys/${owner.keyId}/approvals`, { token, body: { amount_cents: cents } });
    // A key cannot approve its own spend.
    expectFailure(await approve(owner.apiKey, 100), 403, 'forbidden');
    expectFailure(await approve(owner.session, 0), 400, 'validation_failed');
    const approved = await approve(owner.session, 12);
    expect(approved.status).toBe(200);
    expect(approved.body.data).toMatchObject({ approved_cents: 12, remaining_approval_cents: 12 });
    const results = await Promise.all(Array.from({ length: 5 }, () => callPaid()));
    expect(results.filter((r) => r.status === 200)).toHaveLength(2);
    for (const r of results.filter((x) => x.status !== 200)) {
      expectFailure(r, 402, 'payment_required');
      expect(r.body.error.details.reason).toBe('approval_required');
    }
    await served.gateway.drain.flush(); // Postgres has the calls (the usage drain: docs/durability.md)
    const [key] = await sql(served.stack.db.url, 'select spent_cents, approved_cents from api_keys where id = $1', [
      owner.keyId,
    ]);
    expect(key).toEqual({ spent_cents: '10', approved_cents: '12' });
  });

  it('the approval page: sign-in link when signed out; an owner approves with the CSRF-protected form', async () => {
    const signedOut = await http(served.api.url, 'GET', `/approve/${owner.keyId}`);
    expect(signedOut.status).toBe(200);
    expect(signedOut.text).toContain(`/login?next=${encodeURIComponent(`/approve/${owner.keyId}`)}`);

    const form = await fetch(`${served.api.url}/approve/${owner.keyId}`, {
      headers: { cookie: `svc_session=${owner.session}` },
    });
    const html = await form.text();
    expect(html).toContain('approval mode');
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
    const csrfCookie = /svc_csrf=([^;]+)/.exec(form.headers.get('set-cookie') ?? '')?.[1];
    expect(csrf).toBeTruthy();
    const post = (token: string | undefined) =>
      fetch(`${served.api.url}/approve/${owner.keyId}`, {
        method: 'POST',
        headers: {
          cookie: `svc_session=${owner.session}; svc_csrf=${csrfCookie}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ csrf: token ?? '', amount_cents: '10' }).toString(),
      });
    expect((await post('forged')).status).toBe(403);
    const ok = await post(csrf);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('Approved');
    expect((await callPaid()).status).toBe(200); // 12 + 10 approved, 10 spent: one more 5-cent call fits
    expect((await callPaid()).status).toBe(200);
    expectFailure(await callPaid(), 402, 'payment_required');
  });
});
