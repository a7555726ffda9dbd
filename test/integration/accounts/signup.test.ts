// Human signup and email verification over real SMTP, Temporal, Postgres and Redis.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../core/clock.js';
import { sql } from '../../helpers/db.js';
import { expectFailure, http, describe as show } from '../../helpers/http.js';
import { startFullStack, tokenFromMail, type FullStack } from '../../helpers/full-stack.js';

describe('signup and email verification', () => {
  let s: FullStack;
  const clock = new ManualClock();
  let n = 0;
  const email = (tag: string) => `${tag}-${++n}@example.com`;

  beforeAll(async () => {
    s = await startFullStack({ clock, env: { PUBLIC_BASE_URL: 'https://market.example.com' } });
  });
  afterAll(async () => {
    expect(await s.services.ledger.findDrift()).toEqual([]);
    await s.close();
  });

  async function signup(address: string, name = 'Ada') {
    const res = await http(s.base, 'POST', '/v1/signup', { body: { email: address, name } });
    expect(res.status, show(res)).toBe(201);
    return res.body.data;
  }

  it('creates the account, a consumer key, a session and withholds the 100-cent starter credit', async () => {
    const address = email('ada');
    const res = await http(s.base, 'POST', '/v1/auth/signup', { body: { email: address.toUpperCase(), name: 'Ada' } });
    expect(res.status, show(res)).toBe(201);
    const data = res.body.data;
    expect(data).toEqual({
      account: {
        org_id: expect.stringMatching(/^org_/),
        user_id: expect.stringMatching(/^usr_/),
        email: address,
        name: 'Ada',
        role: 'owner',
        email_verified: false,
      },
      api_key: expect.stringMatching(/^svc_live_[0-9A-Za-z]{24}$/),
      key_id: expect.stringMatching(/^key_/),
      session_token: expect.stringMatching(/^sess_[0-9A-Za-z]{32}$/),
      session_expires_at: expect.any(String),
      credit_cents: 0,
      starter_credits: { amount_cents: 100, status: 'withheld', released_by: 'email_verification' },
    });
    expect(res.headers.get('x-svc-key')).toBe(data.api_key);

    const me = await http(s.base, 'GET', '/v1/me', { token: data.api_key });
    expect(me.body.data).toMatchObject({
      credit_cents: 0,
      withheld_credit_cents: 100,
      scopes: ['catalog:read', 'proxy:call', 'keys:write', 'usage:read'],
    });
    const bySession = await http(s.base, 'GET', '/v1/me', { token: data.session_token });
    expect(bySession.body.data.user).toEqual({
      user_id: data.account.user_id,
      email: address,
      name: 'Ada',
      role: 'owner',
      email_verified: false,
    });
    expect(bySession.body.data.credential).toEqual({ type: 'session', session_id: expect.stringMatching(/^ses_/) });
  });

  it('mails a link to PUBLIC_BASE_URL/verify-email and the plain token line, as text and HTML', async () => {
    const address = email('mail');
    await signup(address);
    const mail = await s.smtp.waitForMail(address);
    const token = tokenFromMail(mail.text);
    expect(token).toMatch(/^[0-9A-Za-z]{43}$/);
    expect(mail.text).toContain(`https://market.example.com/verify-email?token=${token}`);
    expect(mail.html).toContain(`href="https://market.example.com/verify-email?token=${token}"`);
    expect(mail.html).toContain(`Verification token: <code>${token}</code>`);
    // Only the hash is stored.
    const rows = await sql(s.db.url, 'select token_hash from email_verifications');
    expect(JSON.stringify(rows)).not.toContain(token);
  });

  it('verification elevates the same key in place and releases exactly 100 usable cents', async () => {
    const address = email('verify');
    const data = await signup(address);
    const token = tokenFromMail((await s.smtp.waitForMail(address)).text);

    const before = await http(s.base, 'GET', '/v1/me', { token: data.api_key });
    expect(before.body.data.credit_cents).toBe(0);
    // Before verification the person's session carries the consumer scopes only, like the signup key.
    const sessionBefore = await http(s.base, 'GET', '/v1/me', { token: data.session_token });
    expect(sessionBefore.body.data.scopes).toEqual(['catalog:read', 'proxy:call', 'keys:write', 'usage:read']);

    const res = await http(s.base, 'POST', '/v1/auth/verify-email', { body: { token } });
    expect(res.status, show(res)).toBe(200);
    expect(res.body.data).toMatchObject({
      verified: true,
      org_id: data.account.org_id,
      user: { email: address, email_verified: true },
      scopes_added: ['billing:write', 'provider:write'],
      credit_cents: 100,
      withheld_credit_cents: 0,
    });

    const sessionAfter = await http(s.base, 'GET', '/v1/me', { token: data.session_token });
    expect(sessionAfter.body.data.scopes).toHaveLength(6);

    const after = await http(s.base, 'GET', '/v1/me', { token: data.api_key });
    expect(after.body.data.credential.key_id).toBe(data.key_id);
    expect(after.body.data.scopes).toEqual(
      expect.arrayContaining(['billing:write', 'provider:write', 'proxy:call', 'catalog:read']),
    );
    expect(after.body.data).toMatchObject({ credit_cents: 100, withheld_credit_cents: 0 });
    const ledger = await sql(
      s.db.url,
      'select kind, amount_cents, idempotency_key from ledger_entries where org_id = $1',
      [data.account.org_id],
    );
    expect(ledger).toEqual([{ kind: 'grant', amount_cents: '100', idempotency_key: 'starter-credits' }]);
  });

  it('refuses a used, an unknown and an expired token with 400 and changes nothing', async () => {
    const address = email('tokens');
    const data = await signup(address);
    const token = tokenFromMail((await s.smtp.waitForMail(address)).text);
    expectFailure(
      await http(s.base, 'POST', '/v1/auth/verify-email', { body: { token: 'x'.repeat(43) } }),
      400,
      'validation_failed',
    );

    clock.advance(24 * 3_600_000 + 1);
    try {
      const expired = await http(s.base, 'POST', '/v1/auth/verify-email', { body: { token } });
      expectFailure(expired, 400, 'validation_failed');
      expect(expired.body.error.message).toMatch(/expired/);
    } finally {
      clock.advance(-(24 * 3_600_000 + 1));
    }
    expect((await http(s.base, 'POST', '/v1/auth/verify-email', { body: { token } })).status).toBe(200);
    const reused = await http(s.base, 'POST', '/v1/auth/verify-email', { body: { token } });
    expectFailure(reused, 400, 'validation_failed');
    expect(reused.body.error.message).toMatch(/already been used/);
    const me = await http(s.base, 'GET', '/v1/me', { token: data.api_key });
    expect(me.body.data.credit_cents).toBe(100);
  });

  it('grants once under 10 concurrent verifications of the same token', async () => {
    const address = email('race');
    const data = await signup(address);
    const token = tokenFromMail((await s.smtp.waitForMail(address)).text);
    const results = await Promise.all(
      Array.from({ length: 10 }, () => http(s.base, 'POST', '/v1/auth/verify-email', { body: { token } })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, ...Array(9).fill(400)]);
    await expect
      .poll(async () => (await http(s.base, 'GET', '/v1/me', { token: data.api_key })).body.data.credit_cents)
      .toBe(100);
    const [row] = await sql<{ sum: string; count: string }>(
      s.db.url,
      'select sum(amount_cents) as sum, count(*) as count from ledger_entries where org_id = $1',
      [data.account.org_id],
    );
    expect(row).toEqual({ sum: '100', count: '1' });
  });

  it('elevates only the signup key: keys created before verification keep their scopes', async () => {
    const address = email('keys');
    const data = await signup(address);
    const other = await http(s.base, 'POST', '/v1/keys', {
      token: data.api_key,
      body: { name: 'ci', scopes: ['catalog:read'] },
    });
    expect(other.status, show(other)).toBe(201);
    const token = tokenFromMail((await s.smtp.waitForMail(address)).text);
    await http(s.base, 'POST', '/v1/auth/verify-email', { body: { token } });
    const me = await http(s.base, 'GET', '/v1/me', { token: other.body.data.api_key });
    expect(me.body.data.scopes).toEqual(['catalog:read']);
  });

  it('two concurrent signups with one email: one 201, one 409, never a 500', async () => {
    for (let round = 0; round < 5; round++) {
      const address = email('twice');
      const results = await Promise.all(
        [address, address.toUpperCase()].map((e) => http(s.base, 'POST', '/v1/signup', { body: { email: e } })),
      );
      expect(results.map((r) => r.status).sort(), results.map(show).join('\n')).toEqual([201, 409]);
      const loser = results.find((r) => r.status === 409)!;
      expectFailure(loser, 409, 'conflict');
      const [row] = await sql<{ count: string }>(s.db.url, 'select count(*) from users where email = $1', [address]);
      expect(row?.count).toBe('1');
    }
  });

  it('answers an existing email with 409 and bad input with 400, creating nothing', async () => {
    const address = email('dup');
    await signup(address);
    const dup = await http(s.base, 'POST', '/v1/signup', { body: { email: address.toUpperCase() } });
    expectFailure(dup, 409, 'conflict');
    const [before] = await sql<{ count: string }>(s.db.url, 'select count(*) from orgs');
    expectFailure(
      await http(s.base, 'POST', '/v1/signup', { body: { email: 'not-an-email' } }),
      400,
      'validation_failed',
    );
    expectFailure(await http(s.base, 'POST', '/v1/signup', { body: {} }), 400, 'validation_failed');
    expectFailure(
      await http(s.base, 'POST', '/v1/signup', { body: { email: email('x'), credit_cents: 1000 } }),
      400,
      'validation_failed',
    );
    expectFailure(
      await http(s.base, 'POST', '/v1/signup', { body: { email: email('x'), name: 'x'.repeat(101) } }),
      400,
      'validation_failed',
    );
    const [after] = await sql<{ count: string }>(s.db.url, 'select count(*) from orgs');
    expect(after).toEqual(before);
  });
});

describe('signup bot challenge in production', () => {
  it('requires challenge_token and checks it against CHALLENGE_VERIFY_URL', async () => {
    const { startUpstream } = await import('../../helpers/upstream.js');
    const verifier = await startUpstream((_req, res, body) => {
      const params = new URLSearchParams(body);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify(
          params.get('response') === 'good'
            ? { success: true }
            : { success: false, 'error-codes': ['invalid-input-response'] },
        ),
      );
    });
    const s = await startFullStack({
      env: {
        NODE_ENV: 'production',
        SECRETS_KEY: 'ab'.repeat(32),
        PUBLIC_BASE_URL: 'https://market.example.com',
        CHALLENGE_VERIFY_URL: `${verifier.url}/siteverify`,
        CHALLENGE_SECRET: 'turnstile-secret',
        UPSTREAM_ALLOW_PRIVATE: 'false',
      },
    });
    try {
      const missing = await http(s.base, 'POST', '/v1/signup', { body: { email: 'bot@example.com' } });
      expectFailure(missing, 400, 'validation_failed');
      expect(missing.body.error.message).toMatch(/challenge_token is required/);
      expectFailure(
        await http(s.base, 'POST', '/v1/signup', { body: { email: 'bot@example.com', challenge_token: 'bad' } }),
        403,
        'forbidden',
      );
      const okRes = await http(s.base, 'POST', '/v1/signup', {
        body: { email: 'human@example.com', challenge_token: 'good' },
      });
      expect(okRes.status, show(okRes)).toBe(201);
      const last = verifier.seen.at(-1)!;
      expect(last.url).toBe('/siteverify');
      expect(Object.fromEntries(new URLSearchParams(last.body))).toEqual({
        secret: 'turnstile-secret',
        response: 'good',
        remoteip: expect.any(String),
      });
      const [row] = await sql<{ count: string }>(
        s.db.url,
        "select count(*) from users where email like '%@example.com'",
      );
      expect(row?.count).toBe('1');
    } finally {
      await s.close();
      await verifier.close();
    }
  });
});
