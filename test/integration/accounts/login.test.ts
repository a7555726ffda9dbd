// Passwordless sign-in and sessions over real SMTP, with an injected clock for expiry.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../core/clock.js';
import { SESSION_ABSOLUTE_MS, SESSION_IDLE_MS } from '../../../core/sessions/sessions.service.js';
import { sql } from '../../helpers/db.js';
import { expectFailure, http, describe as show, type HttpResult } from '../../helpers/http.js';
import { codeFromMail, startFullStack, type FullStack } from '../../helpers/full-stack.js';

const MIN = 60_000;

describe('passwordless sign-in', () => {
  let s: FullStack;
  const clock = new ManualClock();
  let n = 0;
  const email = (tag: string) => `${tag}-${++n}@example.com`;

  beforeAll(async () => {
    // TRUST_PROXY_HOPS=1: tests speak from several client addresses through X-Forwarded-For.
    s = await startFullStack({ clock, env: { TRUST_PROXY_HOPS: '1' } });
  });
  afterAll(async () => {
    expect(await s.services.ledger.findDrift()).toEqual([]);
    await s.close();
  });

  async function signup(address: string) {
    const res = await http(s.base, 'POST', '/v1/signup', { body: { email: address } });
    expect(res.status, show(res)).toBe(201);
    await s.smtp.waitForMail(address, { subject: /Verify/ });
    return res.body.data;
  }

  /** The address of a new account (signed up, its verification mail arrived). */
  const signedUp = async (tag: string) => {
    const address = email(tag);
    await signup(address);
    return address;
  };
  /** A six-digit code other than `code`. */
  const wrongFor = (code: string) => (code === '000000' ? '111111' : '000000');

  const from = (ip?: string) => (ip ? { 'x-forwarded-for': ip } : undefined);
  const askCode = (address: string, ip?: string) =>
    http(s.base, 'POST', '/v1/auth/login/request', { body: { email: address }, headers: from(ip) });

  /** Ask for a code and read it from the mail (the newest code mail to that address). */
  async function requestCode(address: string, ip?: string): Promise<string> {
    const before = s.smtp.messages.length;
    const res = await askCode(address, ip);
    expect(res.status, show(res)).toBe(200);
    await expect
      .poll(() => s.smtp.messages.slice(before).find((m) => m.to.includes(address) && /sign-in code/.test(m.subject)))
      .toBeTruthy();
    return codeFromMail(
      s.smtp.messages.slice(before).find((m) => m.to.includes(address) && /sign-in code/.test(m.subject))!.text,
    );
  }

  const verify = (address: string, code: string, ip?: string) =>
    http(s.base, 'POST', '/v1/auth/login/verify', { body: { email: address, code }, headers: from(ip) });

  it('accepts the code within 10 minutes and returns a session', async () => {
    const address = email('ok');
    const account = await signup(address);
    const code = await requestCode(address);
    expect(code).toMatch(/^\d{6}$/);
    clock.advance(10 * MIN - 1_000);
    const res = await verify(address, code);
    expect(res.status, show(res)).toBe(200);
    expect(res.body.data).toEqual({
      session_token: expect.stringMatching(/^sess_[0-9A-Za-z]{32}$/),
      session_id: expect.stringMatching(/^ses_/),
      expires_at: new Date(clock.now().getTime() + SESSION_ABSOLUTE_MS).toISOString(),
      org_id: account.account.org_id,
      user: { user_id: account.account.user_id, email: address, name: null, role: 'owner', email_verified: true },
    });
    const me = await http(s.base, 'GET', '/v1/me', { token: res.body.data.session_token });
    expect(me.body.data.user.email).toBe(address);
    expect(me.body.data.scopes).toHaveLength(6);
    // Only a keyed hash of the code is stored.
    const rows = await sql(s.db.url, 'select code_hash from login_codes where email = $1', [address]);
    expect(JSON.stringify(rows)).not.toContain(code);
  });

  it('rejects the code after 10 minutes', async () => {
    const address = await signedUp('late');
    const code = await requestCode(address);
    clock.advance(10 * MIN + 1);
    expectFailure(await verify(address, code), 401, 'unauthenticated');
  });

  it('rejects a code used once already', async () => {
    const address = await signedUp('reuse');
    const code = await requestCode(address);
    expect((await verify(address, code)).status).toBe(200);
    expectFailure(await verify(address, code), 401, 'unauthenticated');
  });

  it('voids the code after 5 wrong tries, even for the right code', async () => {
    const address = await signedUp('brute');
    const code = await requestCode(address);
    const wrong = wrongFor(code);
    for (let i = 0; i < 5; i++) expectFailure(await verify(address, wrong), 401, 'unauthenticated');
    // From another address (this one has spent its wrong guesses for this email: 429), the right code is void.
    expectFailure(await verify(address, code), 429, 'rate_limited');
    expectFailure(await verify(address, code, '192.0.2.50'), 401, 'unauthenticated');
  });

  it('still accepts the right code after 4 wrong tries', async () => {
    const address = await signedUp('four');
    const code = await requestCode(address);
    const wrong = wrongFor(code);
    for (let i = 0; i < 4; i++) expect((await verify(address, wrong)).status).toBe(401);
    expect((await verify(address, code)).status).toBe(200);
  });

  it('a new request does not void the live code; signing in voids the rest', async () => {
    const address = await signedUp('newer');
    const first = await requestCode(address);
    const second = await requestCode(address);
    const res = await verify(address, first);
    expect(res.status, show(res)).toBe(200);
    if (first !== second) expectFailure(await verify(address, second), 401, 'unauthenticated');
  });

  it('a stranger cannot lock the owner out by requesting codes', async () => {
    const address = await signedUp('victim');
    const owner = '198.51.100.7';
    const stranger = '203.0.113.9';
    const earlier = await requestCode(address, owner);
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await askCode(address, stranger)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
    // (The stranger's codes went to the owner's mailbox: let them all arrive before reading the next one.)
    const codeMails = () => s.smtp.messages.filter((m) => m.to.includes(address) && /sign-in code/.test(m.subject));
    await expect.poll(() => codeMails().length).toBe(6);
    // The owner's live code survived the stranger's requests, and the owner can still ask for a new one.
    const res = await verify(address, earlier, owner);
    expect(res.status, show(res)).toBe(200);
    const again = await verify(address, await requestCode(address, owner), owner);
    expect(again.status, show(again)).toBe(200);
  });

  it('a stranger’s wrong guesses are limited per address, so the owner’s next code survives them', async () => {
    const address = await signedUp('guessed');
    const owner = '198.51.100.8';
    const stranger = '203.0.113.10';
    const burned = await requestCode(address, owner);
    const wrong = wrongFor(burned);
    for (let i = 0; i < 5; i++) expectFailure(await verify(address, wrong, stranger), 401, 'unauthenticated');
    // The stranger's address has spent its guesses at this email; the owner's fresh code is out of its reach.
    expectFailure(await verify(address, wrong, stranger), 429, 'rate_limited');
    const fresh = await requestCode(address, owner);
    expectFailure(await verify(address, wrongFor(fresh), stranger), 429, 'rate_limited');
    const res = await verify(address, fresh, owner);
    expect(res.status, show(res)).toBe(200);
  });

  it('caps code requests per email across all addresses (a botnet ceiling a single address cannot reach)', async () => {
    const address = email('botnet');
    const statuses: number[] = [];
    for (let ip = 1; ip <= 7; ip++)
      for (let i = 0; i < 5; i++) statuses.push((await askCode(address, `203.0.113.${100 + ip}`)).status);
    expect(statuses.filter((x) => x === 200)).toHaveLength(30);
    expect(statuses.slice(30)).toEqual([429, 429, 429, 429, 429]);
  });

  it('answers known and unknown emails byte for byte alike (request id aside); the unknown gets where to sign up', async () => {
    const known = email('known');
    await signup(known);
    const unknown = email('nobody');
    const strip = (r: HttpResult) => ({
      status: r.status,
      body: r.text.replace(r.headers.get('x-request-id')!, 'REQ'),
      headers: [...r.headers.entries()].filter(([k]) => k !== 'date' && k !== 'x-request-id'),
    });
    const a = await http(s.base, 'POST', '/v1/auth/login/request', { body: { email: known } });
    const b = await http(s.base, 'POST', '/v1/auth/login/request', { body: { email: unknown } });
    expect(a.status).toBe(200);
    expect(strip(b)).toEqual(strip(a));
    await s.smtp.waitForMail(known, { subject: /sign-in code/ });
    // Not silence (issue 22): no code, but the way to sign up.
    const invite = await s.smtp.waitForMail(unknown, { subject: /No API marketplace account/ });
    expect(invite.text).toContain(`/signup?email=${encodeURIComponent(unknown)}`);
    expect(invite.text).not.toMatch(/\b\d{6}\b/);
    // A guess for an unknown address fails exactly like a wrong code.
    expectFailure(await verify(unknown, '123456'), 401, 'unauthenticated');
  });

  it('rate limits code requests per email (for unknown emails too) with 429 and Retry-After', async () => {
    const address = email('flood');
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++)
      statuses.push((await http(s.base, 'POST', '/v1/auth/login/request', { body: { email: address } })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    const res = await http(s.base, 'POST', '/v1/auth/login/request', { body: { email: address } });
    expectFailure(res, 429, 'rate_limited');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('grants the starter credit once when the first sign-in verifies the email, under 10 concurrent verifies', async () => {
    const address = email('first');
    const account = await signup(address);
    const code = await requestCode(address);
    const results = await Promise.all(Array.from({ length: 10 }, () => verify(address, code)));
    expect(results.map((r) => r.status).sort()).toEqual([200, ...Array(9).fill(401)]);
    // A first proof by code revokes what the org had before it (issue 21: the signup key may be a stranger's); the
    // credit and every scope belong to the session the proof made.
    const session = results.find((r) => r.status === 200)!.body.data.session_token as string;
    expectFailure(await http(s.base, 'GET', '/v1/me', { token: account.api_key }), 401, 'unauthenticated');
    await expect
      .poll(async () => (await http(s.base, 'GET', '/v1/me', { token: session })).body.data, {
        timeout: 10_000,
      })
      .toMatchObject({
        credit_cents: 100,
        withheld_credit_cents: 0,
        scopes: expect.arrayContaining(['billing:write', 'provider:write']),
      });
    // A later sign-in grants nothing more.
    expect((await verify(address, await requestCode(address))).status).toBe(200);
    const [row] = await sql<{ sum: string; count: string }>(
      s.db.url,
      'select sum(amount_cents) as sum, count(*) as count from ledger_entries where org_id = $1',
      [account.account.org_id],
    );
    expect(row).toEqual({ sum: '100', count: '1' });
    expect(await s.services.ledger.findDrift()).toEqual([]);
  });

  it('logout ends the session; an API key cannot log out', async () => {
    const address = email('bye');
    const account = await signup(address);
    const session = account.session_token as string;
    expectFailure(await http(s.base, 'POST', '/v1/auth/logout', { token: account.api_key }), 403, 'forbidden');
    const res = await http(s.base, 'POST', '/v1/auth/logout', { token: session });
    expect(res.status, show(res)).toBe(200);
    expect(res.body.data).toEqual({ signed_out: true });
    expectFailure(await http(s.base, 'GET', '/v1/me', { token: session }), 401, 'unauthenticated');
  });

  it('expires a session after 7 idle days, and after 30 days however active', async () => {
    const idle = await signup(email('idle'));
    clock.advance(SESSION_IDLE_MS + MIN);
    expectFailure(await http(s.base, 'GET', '/v1/me', { token: idle.session_token }), 401, 'unauthenticated');

    const active = await signup(email('active'));
    for (let day = 0; day < 29; day++) {
      clock.advance(24 * 3_600_000);
      expect((await http(s.base, 'GET', '/v1/me', { token: active.session_token })).status).toBe(200);
    }
    clock.advance(24 * 3_600_000 + MIN);
    expectFailure(await http(s.base, 'GET', '/v1/me', { token: active.session_token }), 401, 'unauthenticated');
  });

  it('the JSON API takes only Authorization: Bearer; the pages’ session cookie is ignored on /v1/*', async () => {
    const person = await signup(email('cookie'));
    const other = await signup(email('otherorg'));
    const cookie = { cookie: `svc_session=${person.session_token}` };
    expectFailure(await http(s.base, 'GET', '/v1/me', { headers: cookie }), 401, 'unauthenticated');
    // A cross-site form would carry the cookie: it must not act for the person.
    const forged = await http(s.base, 'POST', '/v1/keys', { headers: cookie, body: { name: 'csrf' } });
    expectFailure(forged, 401, 'unauthenticated');
    const [keys] = await sql<{ count: string }>(s.db.url, 'select count(*) from api_keys where org_id = $1', [
      person.account.org_id,
    ]);
    expect(keys?.count).toBe('1');
    // With a bearer credential, the cookie changes nothing: the bearer is who acts.
    const res = await http(s.base, 'GET', '/v1/me', { token: other.api_key, headers: cookie });
    expect(res.body.data.org_id).toBe(other.account.org_id);
    expect(res.body.data.credential.type).toBe('api_key');
    const bySession = await http(s.base, 'GET', '/v1/me', { token: person.session_token });
    expect(bySession.body.data.credential.type).toBe('session');
  });
});

describe('sign-in response time does not depend on mail delivery', () => {
  it('answers a known address as fast as an unknown one while the mail server is slow', async () => {
    const { startSmtpCapture } = await import('../../helpers/smtp.js');
    const slow = await startSmtpCapture({ delayMs: 1_500 });
    const s = await startFullStack({ env: { SMTP_URL: slow.url } });
    try {
      const known = 'timing@example.com';
      expect((await http(s.base, 'POST', '/v1/signup', { body: { email: known } })).status).toBe(201);
      const time = async (address: string) => {
        const t = performance.now();
        const res = await http(s.base, 'POST', '/v1/auth/login/request', { body: { email: address } });
        expect(res.status).toBe(200);
        return performance.now() - t;
      };
      const knownMs = await time(known);
      const unknownMs = await time('nobody-timing@example.com');
      expect(knownMs).toBeLessThan(500); // the 1.5 s delivery happens after the response
      expect(Math.abs(knownMs - unknownMs)).toBeLessThan(250);
      await slow.waitForMail(known, { subject: /sign-in code/, timeoutMs: 10_000 });
    } finally {
      await s.close();
      await slow.close();
    }
  });
});
