// The demand board's double opt-in (issue 31, section 8) over the real stack: an email the requesting org has not
// proven gets one confirmation mail (a link, never the requester's words); the link's page shows the request and a
// button (GET confirms nothing), a CSRF'd POST confirms; the token is stored only as its SHA-256 and works 7 days; a
// confirmed address is told when a matching listing is published through the real publish workflow, an unconfirmed
// one is not; the `demand-email-cleanup` workflow forgets addresses left unconfirmed past their link (the vote stays);
// confirmation mails are limited per address and per requesting org (429 `rate_limited`, nothing recorded); REST and
// the MCP tool say a confirmation mail was sent.
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../core/clock.js';
import { sha256Hex } from '../../../core/crypto.js';
import { SCHEDULES } from '../../../core/temporal/contracts.js';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { sql } from '../../helpers/db.js';
import { csrfOf, FormBrowser } from '../../helpers/form-browser.js';
import { startFullStack, type FullStack } from '../../helpers/full-stack.js';
import { describe as show, expectFailure, http } from '../../helpers/http.js';
import { serveMcp, type ServedMcp } from '../../helpers/mcp-served.js';
import type { CapturedMail } from '../../helpers/smtp.js';
import { recordHistory } from '../../helpers/temporal.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';

const WEEK_MS = 7 * 24 * 3_600_000;
/** A word no other request shares, so requests in this file never merge by accident. */
const word = () =>
  randomBytes(6)
    .toString('hex')
    .replace(/[0-9]/g, (d) => 'ghijklmnop'[Number(d)]!);
const tokenOf = (mail: CapturedMail) => /\/api-requests\/confirm\?token=([0-9A-Za-z]{43})/.exec(mail.text)?.[1] ?? '';

describe('demand board: double opt-in', () => {
  let s: FullStack;
  let upstream: Upstream;
  let served: ServedMcp;
  let requester: Person;
  let provider: Person;
  const clock = new ManualClock();

  beforeAll(async () => {
    upstream = await startUpstream();
    s = await startFullStack({ clock });
    served = await serveMcp(s.services);
    requester = await createPerson(s.services);
    provider = await createPerson(s.services);
  });
  afterAll(async () => {
    await served?.close();
    await s?.close();
    await upstream?.close();
  });

  const ask = (token: string, body: Record<string, unknown>) =>
    http(s.base, 'POST', '/v1/api-requests', { token, body });
  const vote = async (email: string) =>
    (
      await sql<Record<string, unknown>>(
        s.db.url,
        `select v.*, r.votes from api_request_votes v
        join api_requests r on r.id = v.request_id where v.email = $1`,
        [email],
      )
    )[0];
  const mailsTo = (address: string) => s.smtp.messages.filter((m) => m.to.includes(address));
  const confirmMail = (address: string) => s.smtp.waitForMail(address, { subject: /Confirm your email/ });

  /** A browser opening the mailed link: the page, and the form's CSRF token. */
  async function openLink(token: string) {
    const browser = new FormBrowser(s.base, 'http://leaves.invalid/');
    const page = await browser.request('GET', `/api-requests/confirm?token=${token}`);
    return { browser, page, csrf: csrfOf(page.text) };
  }

  const publish = async (slug: string, name: string, summary: string) => {
    const created = await http(s.base, 'POST', '/v1/provider/apis', {
      token: provider.session,
      body: { name, slug, summary, base_url: upstream.url, endpoints: [{ method: 'GET', path: '/x', price_cents: 1 }] },
    });
    expect(created.status, show(created)).toBe(201);
    const res = await http(s.base, 'POST', `/v1/provider/apis/${created.body.data.api_id}/publish`, {
      token: provider.session,
      body: { acceptTerms: true, skipVerify: true },
    });
    expect(res.status, show(res)).toBe(200);
    expect(res.body.data.status).toBe('live');
  };

  const topic = word();
  const confirmedAddress = `confirmed-${word()}@elsewhere.test`;
  const pendingAddress = `pending-${word()}@elsewhere.test`;

  it('an unproven email gets one confirmation mail (a link, not the words); the token is stored hashed', async () => {
    const query = `Glacier ${topic} melt measurements`;
    const res = await ask(requester.apiKey, { query, email: confirmedAddress.toUpperCase(), notes: 'see evil.test' });
    expect(res.status, show(res)).toBe(201);
    expect(res.body.meta).toMatchObject({
      merged: false,
      notify_email: null,
      email_status: 'confirmation_sent',
      email_note: expect.stringContaining(`A confirmation mail was sent to ${confirmedAddress}`),
    });
    const mail = await confirmMail(confirmedAddress);
    const token = tokenOf(mail);
    expect(token).toMatch(/^[0-9A-Za-z]{43}$/);
    expect(mail.html).toContain(`/api-requests/confirm?token=${token}`);
    for (const words of [topic, 'Glacier', 'evil.test']) expect(mail.text + mail.html).not.toContain(words);

    const row = await vote(confirmedAddress);
    expect(row).toMatchObject({
      email: confirmedAddress,
      email_token_hash: sha256Hex(token),
      email_confirmed_at: null,
      notified_at: null,
    });
    expect((row!.email_token_expires_at as Date).getTime() - clock.now().getTime()).toBe(WEEK_MS);
    const everything = await sql(s.db.url, 'select * from api_request_votes');
    expect(JSON.stringify(everything)).not.toContain(token);

    // Asking again with the same address while its link works sends no second mail.
    const again = await ask(requester.apiKey, { query, email: confirmedAddress });
    expect(again.status, show(again)).toBe(200);
    expect(again.body.meta).toMatchObject({ merged: true, notify_email: null, email_status: 'confirmation_pending' });
    expect(again.body.meta.email_note).toContain('no second mail');
    await new Promise((r) => setTimeout(r, 300));
    expect(mailsTo(confirmedAddress)).toHaveLength(1);
  });

  it('GET shows the request and a button and confirms nothing; POST without CSRF is refused; with it, confirms', async () => {
    const token = tokenOf(await confirmMail(confirmedAddress));
    const { browser, page, csrf } = await openLink(token);
    expect(page.status, page.text).toBe(200);
    expect(page.text).toContain(`Glacier ${topic} melt measurements`);
    expect(page.text).toContain(confirmedAddress);
    expect(page.text).toMatch(/<form method="post" action="\/api-requests\/confirm">/);
    expect(page.text).not.toContain('evil.test'); // notes are the requester's, never shown
    expect(csrf).toMatch(/^[0-9A-Za-z]{32}$/);
    await openLink(token); // a mail scanner following the link twice
    expect((await vote(confirmedAddress))!.email_confirmed_at).toBeNull();

    const noCsrf = await browser.request('POST', '/api-requests/confirm', { token });
    expect(noCsrf.status).toBe(403);
    const forged = await browser.request('POST', '/api-requests/confirm', { token, csrf: 'A'.repeat(32) });
    expect(forged.status).toBe(403);
    expect((await vote(confirmedAddress))!.email_confirmed_at).toBeNull();

    const done = await browser.request('POST', '/api-requests/confirm', { token, csrf });
    expect(done.status, done.text).toBe(200);
    expect(done.text).toContain(`<strong>${confirmedAddress}</strong> is confirmed for this request`);
    expect((await vote(confirmedAddress))!.email_confirmed_at).toEqual(clock.now());
    // A second POST (a reload) answers the same; the link's page now says it is confirmed.
    expect((await browser.request('POST', '/api-requests/confirm', { token, csrf })).status).toBe(200);
    expect((await openLink(token)).page.text).toContain('is confirmed for this request');

    const after = await ask(requester.apiKey, { query: `Glacier ${topic} melt measurements`, email: confirmedAddress });
    expect(after.body.meta).toMatchObject({ email_status: 'confirmed', notify_email: confirmedAddress });
  });

  it('an unknown or damaged link is refused with 400 and a page that says why', async () => {
    const unknown = await openLink('x'.repeat(43));
    expect(unknown.page.status).toBe(400);
    expect(unknown.page.text).toContain('This confirmation link is not valid');
    const damaged = await openLink('short');
    expect(damaged.page.status).toBe(400);
    expect(damaged.page.text).toContain('missing its token or it is damaged');
  });

  it('a confirmed address is told when a matching listing is published; an unconfirmed one is not', async () => {
    const other = await createPerson(s.services);
    const res = await ask(other.apiKey, { query: `glacier melt ${topic} measurement`, email: pendingAddress });
    expect(res.status, show(res)).toBe(200); // merged into the same request
    expect(res.body.meta).toMatchObject({ merged: true, email_status: 'confirmation_sent' });
    await confirmMail(pendingAddress);

    await publish(`glacier-${topic}`, `Glacier ${topic}`, `Glacier melt measurements from ${topic} stations`);
    const told = await s.smtp.waitForMail(confirmedAddress, { subject: /An API you asked for is live/ });
    expect(told.text).toContain(`/apis/glacier-${topic}`);
    // The publish run sends its mails before it finishes: everything it will send is here.
    expect(mailsTo(pendingAddress).map((m) => m.subject)).toEqual(['Confirm your email for an API request']);
    expect((await vote(pendingAddress))!.notified_at).toBeNull();
    expect((await vote(confirmedAddress))!.notified_at).not.toBeNull();

    // Confirming afterwards: the page says the API is already live; nothing more is mailed.
    const token = tokenOf(mailsTo(pendingAddress)[0]!);
    const { browser, csrf } = await openLink(token);
    const done = await browser.request('POST', '/api-requests/confirm', { token, csrf });
    expect(done.text).toContain('already answered');
    expect(done.text).toContain(`href="/apis/glacier-${topic}"`);
  });

  it('confirmation mails are limited per address and per requesting org: 429 rate_limited, nothing recorded', async () => {
    const shared = `shared-${word()}@elsewhere.test`;
    const a = await createPerson(s.services);
    const b = await createPerson(s.services);
    expect((await ask(a.apiKey, { query: `${word()} ferry timetable`, email: shared })).body.meta.email_status).toBe(
      'confirmation_sent',
    );
    const bQuery = `${word()} tram timetable`;
    const limited = await ask(b.apiKey, { query: bQuery, email: shared });
    expectFailure(limited, 429, 'rate_limited');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(3_000);
    expect(retryAfter).toBeLessThanOrEqual(3_600);
    expect(limited.body.error.details).toEqual({ retry_after_seconds: retryAfter });
    expect(limited.body.error.message).toContain('less than an hour ago');
    const open = await http(s.base, 'GET', '/v1/api-requests?status=all&limit=200');
    expect(open.text).not.toContain(bQuery);
    await confirmMail(shared);
    await new Promise((r) => setTimeout(r, 300));
    expect(mailsTo(shared)).toHaveLength(1);
    // Without an email the same request is recorded.
    expect((await ask(b.apiKey, { query: bQuery })).status).toBe(201);

    const c = await createPerson(s.services);
    for (let i = 0; i < 10; i++) {
      const res = await ask(c.apiKey, {
        query: `${word()} ${word()} registry`,
        email: `c${i}-${word()}@elsewhere.test`,
      });
      expect(res.body.meta?.email_status, show(res)).toBe('confirmation_sent');
    }
    const eleventh = await ask(c.apiKey, { query: `${word()} ${word()} registry`, email: `c10-${word()}@x.test` });
    expectFailure(eleventh, 429, 'rate_limited');
    expect(eleventh.body.error.message).toContain('10 email confirmations in the last 24 hours');
    expect(Number(eleventh.headers.get('retry-after'))).toBeGreaterThan(80_000);
  });

  it('request_api says a confirmation mail was sent, to an agent on an anonymous key', async () => {
    const registered = await http(s.base, 'POST', '/v1/register');
    expect(registered.status, show(registered)).toBe(201);
    const transport = new StreamableHTTPClientTransport(new URL(`${served.server.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${registered.body.data.api_key}` } },
    });
    const client = new Client({ name: 'double-opt-in-test', version: '1.0.0' });
    await client.connect(transport);
    served.clients.push(client);
    await client.listTools(); // the client then checks the result against the tool's output schema
    const agentAddress = `agent-owner-${word()}@elsewhere.test`;
    const result = await client.callTool({
      name: 'request_api',
      arguments: { query: `${word()} satellite passes`, email: agentAddress },
    });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({
      votes: 1,
      merged: false,
      notify_email: null,
      email_status: 'confirmation_sent',
      email_note: expect.stringContaining(`A confirmation mail was sent to ${agentAddress}`),
    });
    const text = (result.content as { type: string; text: string }[])[0]!.text;
    expect(text).toContain('A confirmation mail was sent');
    await confirmMail(agentAddress);
  });

  it('is scheduled daily; an expired link is refused and the address forgotten after 7 days, the vote kept', async () => {
    const d = await s.temporal.client.schedule.getHandle(SCHEDULES.demandEmailCleanup.id).describe();
    expect(d.action).toMatchObject({ type: 'startWorkflow', workflowType: 'demandEmailCleanupWorkflow' });
    expect(d.spec.calendars?.[0]).toMatchObject({ hour: [{ start: 3, end: 3, step: 1 }] });
    expect(d.policies.overlap).toBe('SKIP');

    const late = `late-${word()}@elsewhere.test`;
    const res = await ask(requester.apiKey, { query: `${word()} avalanche bulletins`, email: late });
    expect(res.body.meta.email_status, show(res)).toBe('confirmation_sent');
    const token = tokenOf(await confirmMail(late));
    const { browser, csrf } = await openLink(token);
    const before = await vote(late);

    const run = (id: string) =>
      s.temporal.client.workflow.execute('demandEmailCleanupWorkflow', {
        workflowId: id,
        taskQueue: s.services.config.temporal.taskQueue,
        args: [],
      });
    expect(await run(`demand-email-cleanup:early-${word()}`)).toEqual({ forgotten: 0 });

    clock.advance(WEEK_MS);
    try {
      const expired = await openLink(token);
      expect(expired.page.status).toBe(400);
      expect(expired.page.text).toContain('This confirmation link has expired');
      const post = await browser.request('POST', '/api-requests/confirm', { token, csrf });
      expect(post.status).toBe(400);
      expect(post.text).toContain('has expired');

      // Addresses left unconfirmed are forgotten; confirmed ones (told, or confirmed after the publish) and the votes
      // stay.
      const result = await run('demand-email-cleanup:test-run');
      await recordHistory(s.temporal.address, 'demand-email-cleanup:test-run', 'demand-email-cleanup-run.json');
      expect(result).toEqual({ forgotten: expect.any(Number) });
      expect((result as { forgotten: number }).forgotten).toBeGreaterThanOrEqual(2);
      const rows = await sql<Record<string, unknown>>(
        s.db.url,
        `select v.email, v.email_token_hash, v.email_token_expires_at, r.votes from api_request_votes v
          join api_requests r on r.id = v.request_id where v.id = $1`,
        [before!.id],
      );
      expect(rows).toEqual([{ email: null, email_token_hash: null, email_token_expires_at: null, votes: 1 }]);
      expect(await vote(late)).toBeUndefined();
      expect(await vote(pendingAddress)).toMatchObject({ email: pendingAddress });
      expect(await vote(confirmedAddress)).toMatchObject({ email: confirmedAddress });
      expect((await openLink(token)).page.text).toContain('This confirmation link is not valid');
      expect(await run(`demand-email-cleanup:again-${word()}`)).toEqual({ forgotten: 0 });
    } finally {
      clock.advance(-WEEK_MS);
    }
  });
});
