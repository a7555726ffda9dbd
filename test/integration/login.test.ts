// Passwordless sign-in and sessions over real SMTP, with an injected clock for expiry.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.js';
import { SESSION_ABSOLUTE_MS, SESSION_IDLE_MS } from '../../core/sessions/sessions.service.js';
import { sql } from '../helpers/db.js';
import { expectFailure, http, describe as show, type HttpResult } from '../helpers/http.js';
import { codeFromMail, startFullStack, type FullStack } from '../helpers/full-stack.js';

const MIN = 60_000;

describe('passwordless sign-in', () => {
  let s: FullStack;
  const clock = new ManualClock();
  let n = 0;
  const email = (tag: string) => `${tag}-${++n}@example.com`;

  beforeAll(async () => {
    s = await startFullStack({ clock });
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

  /** Ask for a code and read it from the mail (the newest code mail to that address). */
  async function requestCode(address: string): Promise<string> {
    const before = s.smtp.messages.length;
    const res = await http(s.base, 'POST', '/v1/auth/login/request', { body: { email: address } });
    expect(res.status, show(res)).toBe(200);
    await expect
      .poll(() => s.smtp.messages.slice(before).find((m) => m.to.includes(address) && /sign-in code/.test(m.subject)))
      .toBeTruthy();
    return codeFromMail(
      s.smtp.messages.slice(before).find((m) => m.to.includes(address) && /sign-in code/.test(m.subject))!.text,
    );
  }

  const verify = (address: string, code: string) =>
    http(s.base, 'POST', '/v1/auth/login/verify', { body: { email: address, code } });

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
    const address = email('late');
    await signup(address);
    const code = await requestCode(address);
    clock.advance(10 * MIN + 1);
    expectFailure(await verify(address, code), 401, 'unauthenticated');
  });

  it('rejects a code used once already', async () => {
    const address = email('reuse');
    await signup(address);
    const code = await requestCode(address);
    expect((await verify(address, code)).status).toBe(200);
    expectFailure(await verify(address, code), 401, 'unauthenticated');
  });

  it('voids the code after 5 wrong tries, even for the right code', async () => {
    const address = email('brute');
    await signup(address);
    const code = await requestCode(address);
    const wrong = code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i++) expectFailure(await verify(address, wrong), 401, 'unauthenticated');
    expectFailure(await verify(address, code), 401, 'unauthenticated');
  });

  it('still accepts the right code after 4 wrong tries', async () => {
    const address = email('four');
    await signup(address);
    const code = await requestCode(address);
    const wrong = code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 4; i++) expect((await verify(address, wrong)).status).toBe(401);
    expect((await verify(address, code)).status).toBe(200);
  });

  it('voids an earlier code when a new one is requested', async () => {
    const address = email('newer');
    await signup(address);
    const first = await requestCode(address);
    const second = await requestCode(address);
    if (first !== second) expectFailure(await verify(address, first), 401, 'unauthenticated');
    expect((await verify(address, second)).status).toBe(200);
  });

  it('answers known and unknown emails byte for byte alike (request id aside), and mails only the known', async () => {
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
    await new Promise((r) => setTimeout(r, 200));
    expect(s.smtp.messages.some((m) => m.to.includes(unknown))).toBe(false);
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
    await expect
      .poll(async () => (await http(s.base, 'GET', '/v1/me', { token: account.api_key })).body.data, {
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

  it('lets the session win when a request carries both a session and a key', async () => {
    const person = await signup(email('both'));
    const other = await signup(email('otherorg'));
    const res = await http(s.base, 'GET', '/v1/me', {
      token: other.api_key,
      headers: { cookie: `svc_session=${person.session_token}` },
    });
    expect(res.body.data.org_id).toBe(person.account.org_id);
    expect(res.body.data.credential.type).toBe('session');
    // A stale session cookie does not hide a valid key.
    const stale = await http(s.base, 'GET', '/v1/me', {
      token: other.api_key,
      headers: { cookie: `svc_session=sess_${'x'.repeat(32)}` },
    });
    expect(stale.body.data.org_id).toBe(other.account.org_id);
  });
});

describe('sign-in response time does not depend on mail delivery', () => {
  it('answers a known address as fast as an unknown one while the mail server is slow', async () => {
    const { startSmtpCapture } = await import('../helpers/smtp.js');
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
