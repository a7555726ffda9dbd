// Demand: requests for missing APIs over the real stack. Near-duplicates merge and count one vote per org; the list
// shows no email or notes; providers see the top requests in their analytics; publishing a matching listing through
// the real publish workflow fulfils the request and mails each requester who left a proven email, once: a verified
// address of the requesting org (issue 21 item 5). Any other address gets only a confirmation mail until its owner
// confirms it (issue 31, double opt-in: double-opt-in.test.ts), so it is never told about the listing here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { sql } from '../../helpers/db.js';
import { startFullStack, type FullStack } from '../../helpers/full-stack.js';
import { describe as show, expectFailure, http } from '../../helpers/http.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';

describe('api requests (demand)', () => {
  let s: FullStack;
  let upstream: Upstream;
  let alice: Person;
  let bob: Person;
  let provider: Person;

  beforeAll(async () => {
    upstream = await startUpstream();
    s = await startFullStack();
    alice = await createPerson(s.services);
    bob = await createPerson(s.services);
    provider = await createPerson(s.services);
  });
  afterAll(async () => {
    await s?.close();
    await upstream?.close();
  });

  const post = (token: string | undefined, body: unknown) => http(s.base, 'POST', '/v1/api-requests', { token, body });

  it('records a request, merges a near-duplicate from another org into it, and counts one vote per org', async () => {
    const first = await post(alice.apiKey, {
      query: 'Tide tables for UK harbours',
      email: alice.email,
      notes: 'for a sailing app',
    });
    expect(first.status, show(first)).toBe(201);
    expect(first.body.meta).toMatchObject({ merged: false, notify_email: alice.email });
    expect(first.body.data).toMatchObject({ query: 'Tide tables for UK harbours', votes: 1, status: 'open' });

    const dup = await post(bob.session, { query: 'uk harbour tide tables API', email: bob.email.toUpperCase() });
    expect(dup.status, show(dup)).toBe(200);
    expect(dup.body.meta).toMatchObject({ merged: true, notify_email: bob.email });
    expect(dup.body.data).toMatchObject({ id: first.body.data.id, votes: 2 });

    // The same org asking again is not a new vote.
    const again = await post(alice.apiKey, { query: 'tide table for uk harbour' });
    expect(again.body.data).toMatchObject({ id: first.body.data.id, votes: 2 });

    const other = await post(alice.apiKey, { query: 'Real-time ferry departures' });
    expect(other.status, show(other)).toBe(201);
    expect(other.body.data.id).not.toBe(first.body.data.id);

    const list = await http(s.base, 'GET', '/v1/api-requests');
    expect(list.status, show(list)).toBe(200);
    expect(list.body.data.map((r: { query: string; votes: number }) => [r.query, r.votes])).toEqual([
      ['Tide tables for UK harbours', 2],
      ['Real-time ferry departures', 1],
    ]);
    expect(list.text).not.toContain('example.com');
    expect(list.text).not.toContain('sailing');

    const analytics = await http(s.base, 'GET', '/v1/provider/analytics', { token: provider.session });
    expect(analytics.status, show(analytics)).toBe(200);
    expect(analytics.body.data.open_api_requests).toEqual([
      { query: 'Tide tables for UK harbours', votes: 2, last_requested_at: expect.any(String) },
      { query: 'Real-time ferry departures', votes: 1, last_requested_at: expect.any(String) },
    ]);
  });

  it('validates the body and needs a bearer', async () => {
    expectFailure(await post(undefined, { query: 'x marks' }), 401, 'unauthenticated');
    for (const body of [
      {},
      { query: '' },
      { query: 'q'.repeat(501) },
      { query: 'maps', notes: 'n'.repeat(2001) },
      { query: 'maps', email: 'not-an-email' },
      { query: 'maps', extra: 1 },
      { query: 'an api for the' },
    ]) {
      expectFailure(await post(alice.apiKey, body), 400, 'validation_failed');
    }
    expectFailure(await http(s.base, 'GET', '/v1/api-requests?limit=0'), 400, 'validation_failed');
    expectFailure(await http(s.base, 'GET', '/v1/api-requests?status=closed'), 400, 'validation_failed');
  });

  const publish = async (slug: string, name: string, summary: string) => {
    const created = await http(s.base, 'POST', '/v1/provider/apis', {
      token: provider.session,
      body: {
        name,
        slug,
        summary,
        base_url: upstream.url,
        endpoints: [{ method: 'GET', path: '/tides', price_cents: 1 }],
      },
    });
    expect(created.status, show(created)).toBe(201);
    const res = await http(s.base, 'POST', `/v1/provider/apis/${created.body.data.api_id}/publish`, {
      token: provider.session,
      body: { acceptTerms: true, skipVerify: true },
    });
    expect(res.status, show(res)).toBe(200);
    expect(res.body.data.status).toBe('live');
  };

  it('mails requesters once when a matching listing is published', async () => {
    await publish('harbour-tides', 'Harbour Tides', 'Tide tables and tide times for every UK harbour');

    const mail = await s.smtp.waitForMail(alice.email, { subject: /Harbour Tides/ });
    expect(mail.text).toContain('Tide tables for UK harbours');
    expect(mail.text).toContain('/apis/harbour-tides');
    expect(mail.text).not.toContain('/v1/apis/harbour-tides');
    await s.smtp.waitForMail(bob.email, { subject: /Harbour Tides/ });

    const fulfilled = await http(s.base, 'GET', '/v1/api-requests?status=fulfilled');
    expect(fulfilled.body.data, show(fulfilled)).toEqual([
      expect.objectContaining({
        query: 'Tide tables for UK harbours',
        status: 'fulfilled',
        fulfilled_by: { slug: 'harbour-tides', name: 'Harbour Tides' },
      }),
    ]);
    const open = await http(s.base, 'GET', '/v1/api-requests');
    expect(open.body.data.map((r: { query: string }) => r.query)).toEqual(['Real-time ferry departures']);

    // A second matching listing mails nobody again; an unrelated one mails nobody.
    await publish('tide-times', 'Tide Times UK', 'UK harbour tide tables');
    await publish('stock-quotes', 'Stock Quotes', 'Delayed stock prices');
    await new Promise((r) => setTimeout(r, 500));
    const sent = s.smtp.messages.filter((m) => /An API you asked for/.test(m.subject));
    expect(sent.map((m) => m.to).sort()).toEqual([[alice.email], [bob.email]].sort());
    const notified = await sql<{ n: string }>(
      s.db.url,
      'select count(*) as n from api_request_votes where notified_at is not null',
    );
    expect(notified[0]!.n).toBe('2');
  });

  it("tells only a proven address: a stranger's, an unverified one or one stored before the rule is not told", async () => {
    const stranger = await createPerson(s.services); // a verified user of another org
    const [mallory, dave, erin, frank, legacy] = await Promise.all([
      createPerson(s.services),
      createPerson(s.services),
      createPerson(s.services, { verified: false }),
      createPerson(s.services),
      createPerson(s.services),
    ]);
    const query = 'Lighthouse beacon schedules';
    const asks: [Person, string, string | null][] = [
      [mallory, stranger.email, null],
      [dave, 'nobody@elsewhere.test', null],
      [erin, erin.email, null],
      [frank, frank.email, frank.email],
    ];
    for (const [who, email, proven] of asks) {
      const res = await post(who.apiKey, { query, email, notes: 'Click http://evil.test now' });
      expect(res.status, show(res)).toBeLessThan(300);
      expect(res.body.meta.notify_email, show(res)).toBe(proven);
      // Issue 31: an unproven address is kept until confirmed or forgotten, and gets one confirmation mail.
      expect(res.body.meta.email_status, show(res)).toBe(proven ? 'confirmed' : 'confirmation_sent');
    }
    // A vote stored before the rule, naming a stranger: not mailed either.
    const [request] = await sql<{ id: string }>(s.db.url, `select id from api_requests where query = $1`, [query]);
    await sql(
      s.db.url,
      `insert into api_request_votes (id, request_id, org_id, email, created_at, updated_at)
       values ('arv_legacy_stranger', $1, $2, $3, now(), now())`,
      [request!.id, legacy.orgId, stranger.email],
    );
    const stored = await sql<{ email: string | null }>(
      s.db.url,
      `select email from api_request_votes where request_id = $1 and id <> 'arv_legacy_stranger' order by email`,
      [request!.id],
    );
    expect(stored.map((r) => r.email)).toEqual(
      [frank.email, 'nobody@elsewhere.test', erin.email, stranger.email].sort(),
    );

    await publish('lighthouse-beacons', 'Lighthouse Beacons', 'Beacon schedules for every lighthouse');
    // The publish run sends its mails before it finishes: everything it will send is here.
    const mail = await s.smtp.waitForMail(frank.email, { subject: /Lighthouse Beacons/ });
    expect(mail.text).toContain(query);
    const lighthouse = s.smtp.messages.filter((m) => /Lighthouse Beacons/.test(m.subject));
    expect(lighthouse.map((m) => m.to)).toEqual([[frank.email]]);
    for (const m of s.smtp.messages) {
      expect(m.text).not.toContain('evil.test');
      if (![stranger.email, 'nobody@elsewhere.test', erin.email].includes(m.to[0]!)) continue;
      // The unconfirmed addresses got their confirmation mail only: a link, never the requester's words.
      expect(m.subject).toBe('Confirm your email for an API request');
      expect(m.text).not.toContain(query);
    }
    const confirmations = s.smtp.messages.filter((m) => m.subject === 'Confirm your email for an API request');
    expect(confirmations.map((m) => m.to[0]).sort()).toEqual(
      [stranger.email, 'nobody@elsewhere.test', erin.email].sort(),
    );
  });
});
