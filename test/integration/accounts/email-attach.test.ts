// Agent-first elevation: an anonymous org (POST /v1/register) attaches an email with POST /v1/me/email; the mailed
// link elevates the same key in place and makes the person the org's owner. Real SMTP, Temporal, Postgres, Redis.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../helpers/db.js';
import { expectFailure, http, describe as show } from '../../helpers/http.js';
import { codeFromMail, startFullStack, tokenFromMail, type FullStack } from '../../helpers/full-stack.js';

describe('attaching an email to an anonymous org', () => {
  let s: FullStack;
  let n = 0;
  const email = (tag: string) => `${tag}-${++n}@example.com`;

  beforeAll(async () => {
    s = await startFullStack({ env: { PUBLIC_BASE_URL: 'https://market.example.com' } });
  });
  afterAll(async () => {
    expect(await s.services.ledger.findDrift()).toEqual([]);
    await s.close();
  });

  async function register() {
    const res = await http(s.base, 'POST', '/v1/register');
    expect(res.status, show(res)).toBe(201);
    return res.body.data as { org_id: string; api_key: string };
  }

  const attach = (token: string, address: string) =>
    http(s.base, 'POST', '/v1/me/email', { token, body: { email: address } });

  async function attachAndGetToken(token: string, address: string): Promise<string> {
    const res = await attach(token, address);
    expect(res.status, show(res)).toBe(200);
    return tokenFromMail((await s.smtp.waitForMail(address, { subject: /Verify/ })).text);
  }

  it('the mailed link elevates the same key in place, and the person signs in with a code afterwards', async () => {
    const org = await register();
    const address = email('agent-owner');
    const res = await attach(org.api_key, address.toUpperCase());
    expect(res.status, show(res)).toBe(200);
    expect(res.body.data).toEqual({ sent: true, email: address, expires_in_seconds: 86_400 });

    const mail = await s.smtp.waitForMail(address, { subject: /Verify/ });
    const token = tokenFromMail(mail.text);
    expect(mail.text).toContain(`https://market.example.com/verify-email?token=${token}`);
    // Nothing changes before the link is used.
    const before = await http(s.base, 'GET', '/v1/me', { token: org.api_key });
    expect(before.body.data.scopes).toEqual(['catalog:read', 'proxy:call', 'keys:write', 'usage:read']);
    expect(await sql(s.db.url, 'select id from users where email = $1', [address])).toEqual([]);

    const verified = await http(s.base, 'POST', '/v1/auth/verify-email', { body: { token } });
    expect(verified.status, show(verified)).toBe(200);
    expect(verified.body.data).toMatchObject({
      verified: true,
      org_id: org.org_id,
      user: { email: address, role: 'owner', email_verified: true },
      scopes_added: ['billing:write', 'provider:write'],
      credit_cents: 0,
    });

    const me = await http(s.base, 'GET', '/v1/me', { token: org.api_key });
    expect(me.status, show(me)).toBe(200);
    expect(me.body.data.org_id).toBe(org.org_id);
    expect(me.body.data.scopes).toEqual(expect.arrayContaining(['billing:write', 'provider:write', 'proxy:call']));
    expect(me.body.data.org.kind).toBe('standard');
    // The new scope works at once on the same key (provider:write).
    const profile = await http(s.base, 'PATCH', '/v1/me/profile', { token: org.api_key, body: { bio: 'agent' } });
    expect(profile.status, show(profile)).toBe(200);

    // The person owns the org now: a sign-in code works for that email.
    const before2 = s.smtp.messages.length;
    expect((await http(s.base, 'POST', '/v1/auth/login/request', { body: { email: address } })).status).toBe(200);
    await expect
      .poll(() => s.smtp.messages.slice(before2).find((m) => m.to.includes(address) && /sign-in/.test(m.subject)))
      .toBeTruthy();
    const code = codeFromMail(
      s.smtp.messages.slice(before2).find((m) => m.to.includes(address) && /sign-in/.test(m.subject))!.text,
    );
    const login = await http(s.base, 'POST', '/v1/auth/login/verify', { body: { email: address, code } });
    expect(login.status, show(login)).toBe(200);
    expect(login.body.data).toMatchObject({ org_id: org.org_id, user: { email: address, role: 'owner' } });
    // An anonymous org gets no trial credit by attaching an email (that is the bot-checked human signup's).
    const ledger = await sql(s.db.url, 'select id from ledger_entries where org_id = $1', [org.org_id]);
    expect(ledger).toEqual([]);
  });

  it('refuses an email another org owns with 409 without naming it, and an org that has an owner', async () => {
    const owned = email('taken');
    const signup = await http(s.base, 'POST', '/v1/signup', { body: { email: owned } });
    expect(signup.status, show(signup)).toBe(201);
    const org = await register();
    const res = await attach(org.api_key, owned);
    expectFailure(res, 409, 'conflict');
    expect(res.text).not.toContain(signup.body.data.account.org_id);
    expect(res.text).not.toContain(signup.body.data.account.user_id);

    // A person's session, or a key of an org that has an owner, has nothing to attach.
    expectFailure(await attach(signup.body.data.session_token, email('x')), 409, 'conflict');
    expectFailure(await attach(signup.body.data.api_key, email('x')), 409, 'conflict');

    // Two orgs race for one fresh address: the first link used wins, the second is 409.
    const fresh = email('race');
    const a = await register();
    const b = await register();
    const tokenA = await attachAndGetToken(a.api_key, fresh);
    await new Promise((r) => setTimeout(r, 50));
    const resB = await attach(b.api_key, fresh);
    expect(resB.status, show(resB)).toBe(200);
    await expect.poll(() => s.smtp.messages.filter((m) => m.to.includes(fresh)).length).toBe(2);
    const tokenB = tokenFromMail(s.smtp.messages.filter((m) => m.to.includes(fresh))[1]!.text);
    const [first, second] = await Promise.all([
      http(s.base, 'POST', '/v1/auth/verify-email', { body: { token: tokenA } }),
      http(s.base, 'POST', '/v1/auth/verify-email', { body: { token: tokenB } }),
    ]);
    expect([first.status, second.status].sort(), `${show(first)}\n${show(second)}`).toEqual([200, 409]);
    const [users] = await sql<{ count: string }>(s.db.url, 'select count(*) from users where email = $1', [fresh]);
    expect(users?.count).toBe('1');
  });

  it('only the org’s root key may attach; bad input is 400; a newer request replaces the pending one', async () => {
    const org = await register();
    const child = await http(s.base, 'POST', '/v1/keys', { token: org.api_key, body: { name: 'child' } });
    expect(child.status, show(child)).toBe(201);
    const byChild = await attach(child.body.data.api_key, email('child'));
    expectFailure(byChild, 403, 'forbidden');
    expect(byChild.body.error.message).toMatch(/root key/);

    for (const body of [{}, { email: 'not-an-email' }, { email: email('x'), org_id: 'org_x' }]) {
      expectFailure(await http(s.base, 'POST', '/v1/me/email', { token: org.api_key, body }), 400, 'validation_failed');
    }
    expectFailure(await http(s.base, 'POST', '/v1/me/email', { body: { email: email('x') } }), 401, 'unauthenticated');

    const typo = email('typo');
    const typoToken = await attachAndGetToken(org.api_key, typo);
    const right = email('right');
    const rightToken = await attachAndGetToken(org.api_key, right);
    expectFailure(
      await http(s.base, 'POST', '/v1/auth/verify-email', { body: { token: typoToken } }),
      400,
      'validation_failed',
    );
    const ok = await http(s.base, 'POST', '/v1/auth/verify-email', { body: { token: rightToken } });
    expect(ok.status, show(ok)).toBe(200);
    expect(ok.body.data.user.email).toBe(right);
  });

  it('limits attach requests per org (429 with Retry-After)', async () => {
    const org = await register();
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await attach(org.api_key, email('flood'))).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    const res = await attach(org.api_key, email('flood'));
    expectFailure(res, 429, 'rate_limited');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
