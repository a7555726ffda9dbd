// Forms a person trusts (issue 31, section 6), over plain HTTP as a browser without JavaScript posts them: the key
// form pre-selects the least privilege that calls APIs and a key created untouched gets exactly that; creating a key
// is Post/Redirect/Get (303, the secret shown once on the page it leads to, never in a URL, a reload creates nothing
// and shows nothing); revoking asks to confirm; a refused form comes back with what was typed and each message
// beside its field (aria-invalid, aria-describedby), worded for people (no zod paths), a textarea's lines counted
// from 1; the sign-in and sign-up pages too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../../api/app.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { signInByMail } from '../../helpers/console-forms.js';
import { sql } from '../../helpers/db.js';
import { closeAll } from '../../helpers/fixtures.js';
import { csrfOf, FormBrowser, type PageResponse } from '../../helpers/form-browser.js';
import { serve } from '../../helpers/http.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';
import { startSmtpCapture, type SmtpCapture } from '../../helpers/smtp.js';

/** What no message for people contains: a zod path (`endpoints.0.price_cents`) or zod's default wording. */
const RAW_ZOD = /\b[a-z_]+\.\d+(\.[a-z_]+)?\b|Too small|Too big|Invalid input|expected (string|number|array)/;

/** The scope boxes of the key form: value → ticked. */
function scopeBoxes(html: string): Record<string, boolean> {
  const out: Record<string, boolean> = {};
  for (const m of html.matchAll(/<input type="checkbox" name="scope" value="([a-z:]+)"( checked)?>/g)) {
    out[m[1]!] = m[2] !== undefined;
  }
  return out;
}

/** The message shown beside input `id`, and that the input points at it. */
function besideField(html: string, id: string): string {
  const input = new RegExp(`<(?:input|textarea|select|fieldset)[^>]*id="${id}"[^>]*>`).exec(html)?.[0] ?? '';
  expect(input, `input #${id}`).toContain('aria-invalid="true"');
  expect(input, `input #${id}`).toMatch(new RegExp(`aria-describedby="[^"]*${id}-error`));
  return new RegExp(`<p id="${id}-error" class="error field-error">([^<]*)</p>`).exec(html)?.[1] ?? '';
}

const inputValue = (html: string, id: string) =>
  new RegExp(`<input[^>]*id="${id}"[^>]*value="([^"]*)"`).exec(html)?.[1] ??
  new RegExp(`id="${id}"[^>]*>`).exec(html)?.[0];

describe('console forms: least privilege, Post/Redirect/Get, confirmation, messages beside fields', () => {
  let stack: TestStack;
  let smtp: SmtpCapture;
  let server: RunningHttpServer;
  let owner: Person;
  let pages: FormBrowser;

  const keyCount = async () =>
    Number(
      (
        await sql<{ n: string }>(stack.db.url, 'select count(*) as n from api_keys where org_id = $1', [owner.orgId])
      )[0]!.n,
    );

  /** The key form as a browser submits it: its ticked boxes (repeated `scope`), its other fields, `name`. */
  async function submitKeyForm(
    b: FormBrowser,
    fields: Record<string, string>,
    scopes?: string[],
  ): Promise<PageResponse> {
    const page = await b.request('GET', '/console/keys');
    const ticked =
      scopes ??
      Object.entries(scopeBoxes(page.text))
        .filter(([, on]) => on)
        .map(([s]) => s);
    const form = new URLSearchParams({ csrf: csrfOf(page.text), budget: '', daily_cap: '', per_call_max: '' });
    for (const [k, v] of Object.entries(fields)) form.set(k, v);
    form.set('scopes_listed', '1');
    for (const s of ticked) form.append('scope', s);
    return b.request('POST', '/console/keys', form);
  }

  beforeAll(async () => {
    smtp = await startSmtpCapture();
    stack = await createTestStack({ env: { SMTP_URL: smtp.url } });
    server = await serve(createApiApp(stack.services).callback());
    owner = await createPerson(stack.services);
    pages = (await signInByMail(server.url, smtp, owner.email, '/console/keys')).browser;
  });
  afterAll(async () => {
    await closeAll(server, stack, smtp);
  });

  it('the key form pre-selects catalog:read, proxy:call, usage:read; money and provider scopes are opt-in, explained', async () => {
    const page = await pages.request('GET', '/console/keys');
    expect(scopeBoxes(page.text)).toEqual({
      'catalog:read': true,
      'proxy:call': true,
      'usage:read': true,
      'keys:write': false,
      'billing:write': false,
      'provider:write': false,
    });
    expect(page.text).toContain('Opt-in: money and provider scopes');
    expect(page.text).toContain('<code>billing:write</code> <span class="muted">spend money: buy credits');
    expect(page.text).toContain('<code>provider:write</code> <span class="muted">publish and change your APIs');
    expect(page.text).toContain('<code>keys:write</code> <span class="muted">create, change and revoke keys');

    // Submitted untouched (only a name): the key gets exactly the three.
    const created = await submitKeyForm(pages, { name: 'untouched' });
    expect(created.status).toBe(303);
    const [key] = await sql<{ scopes: string[] }>(stack.db.url, "select scopes from api_keys where name = 'untouched'");
    expect(key!.scopes.sort()).toEqual(['catalog:read', 'proxy:call', 'usage:read']);
  });

  it('creating a key answers 303; the page it leads to shows the secret once; reloading creates and shows nothing', async () => {
    const before = await keyCount();
    const posted = await submitKeyForm(pages, { name: 'PRG key' });
    expect(posted.status).toBe(303);
    expect(posted.location).toBe('/console/keys?done=created');
    expect(posted.text).not.toMatch(/svc_(live|test)_/);
    const once = posted.headers.getSetCookie().find((c) => c.startsWith('svc_key_once='));
    expect(once).toMatch(/HttpOnly/i);
    expect(once).toMatch(/SameSite=Strict/i);
    expect(once).toMatch(/path=\/console\/keys/i);
    expect(once).not.toMatch(/svc_(live|test)_/); // the cookie holds a token, never the key

    const shown = await pages.request('GET', posted.location!);
    expect(shown.status).toBe(200);
    const secret = /id="secret" readonly[^>]* value="([^"]+)"/.exec(shown.text)?.[1];
    expect(secret).toMatch(/^svc_(live|test)_/);
    expect(shown.text).toContain('Key “PRG key” created.');
    expect(await keyCount()).toBe(before + 1);

    // The reload: the same URL again.
    const reloaded = await pages.request('GET', posted.location!);
    expect(reloaded.status).toBe(200);
    expect(reloaded.text).not.toContain(secret!);
    expect(reloaded.text).toContain('Its secret was shown once');
    expect(await keyCount()).toBe(before + 1);
    const [row] = await sql<{ n: string }>(stack.db.url, "select count(*) as n from api_keys where name = 'PRG key'");
    expect(row!.n).toBe('1');
  });

  it('another session with the one-time cookie sees no secret, and leaves it for the creator', async () => {
    const posted = await submitKeyForm(pages, { name: 'bound key' });
    const token = /svc_key_once=([^;]+)/.exec(posted.headers.getSetCookie().join('\n'))?.[1];
    expect(token).toMatch(/^[0-9A-Za-z]{32}$/);
    const member = await createPerson(stack.services, { role: 'admin', orgId: owner.orgId });
    const stolen = await fetch(`${server.url}/console/keys?done=created`, {
      headers: { cookie: `svc_session=${member.session}; svc_key_once=${token!}` },
    });
    expect(await stolen.text()).not.toMatch(/id="secret"/);
    const mine = await pages.request('GET', '/console/keys?done=created');
    expect(mine.text).toMatch(/id="secret" readonly[^>]* value="svc_/);
  });

  it('revoking asks to confirm: the link leads to a confirmation page; only the confirmed POST revokes', async () => {
    await submitKeyForm(pages, { name: 'to revoke' });
    const [key] = await sql<{ id: string }>(stack.db.url, "select id from api_keys where name = 'to revoke'");
    const revoked = async () =>
      (
        await sql<{ r: boolean }>(stack.db.url, 'select revoked_at is not null as r from api_keys where id = $1', [
          key!.id,
        ])
      )[0]!.r;
    const list = await pages.request('GET', '/console/keys');
    expect(list.text).toContain(`<a class="button" href="/console/keys/${key!.id}/revoke">Revoke`);
    expect(list.text).not.toContain(`<form method="post" action="/console/keys/${key!.id}/revoke"`);

    const confirm = await pages.request('GET', `/console/keys/${key!.id}/revoke`);
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain('Revoke the key <strong>“to revoke”</strong>');
    expect(confirm.text).toContain('This cannot be undone');
    expect(await revoked()).toBe(false);

    // A POST without the confirmation (an old form, a forged button) only shows the question again.
    const unconfirmed = await pages.request('POST', `/console/keys/${key!.id}/revoke`, { csrf: csrfOf(confirm.text) });
    expect(unconfirmed.status).toBe(200);
    expect(unconfirmed.text).toContain('Yes, revoke “to revoke”');
    expect(await revoked()).toBe(false);

    const done = await pages.request('POST', `/console/keys/${key!.id}/revoke`, {
      csrf: csrfOf(confirm.text),
      confirm: 'yes',
    });
    expect(done).toMatchObject({ status: 303, location: '/console/keys?done=revoked' });
    expect(await revoked()).toBe(true);
  });

  it('a refused key form keeps what was typed and shows each message beside its field', async () => {
    const before = await keyCount();
    const res = await submitKeyForm(pages, { name: 'Keep <me>', budget: 'lots', daily_cap: '-2' }, ['proxy:call']);
    expect(res.status).toBe(400);
    expect(inputValue(res.text, 'new-name')).toBe('Keep &lt;me&gt;');
    expect(inputValue(res.text, 'new-budget')).toBe('lots');
    expect(inputValue(res.text, 'new-daily_cap')).toBe('-2');
    expect(besideField(res.text, 'new-budget')).toBe(
      'Budget: enter an amount in dollars, like 5 or 5.00 (or leave it blank).',
    );
    expect(besideField(res.text, 'new-daily_cap')).toContain('Daily cap: cannot be negative');
    expect(scopeBoxes(res.text)['proxy:call']).toBe(true);
    expect(scopeBoxes(res.text)['catalog:read']).toBe(false); // the boxes as they were sent, not the defaults
    expect(res.text).toContain('Please correct 2 fields:');
    expect(res.text).toContain('<a href="#new-budget">');
    expect(await keyCount()).toBe(before);

    const blank = await submitKeyForm(pages, { name: '   ' }, []);
    expect(blank.status).toBe(400);
    expect(besideField(blank.text, 'new-name')).toBe('Name: this field is required.');
    expect(besideField(blank.text, 'new-scopes')).toBe('Scopes: choose at least one.');
    expect(blank.text).not.toMatch(RAW_ZOD);
  });

  it('the provider’s create form: messages by textarea line counted from 1, beside the field, values kept', async () => {
    const page = await pages.request('GET', '/console/provider');
    const post = (fields: Record<string, string>) =>
      pages.request('POST', '/console/provider/apis', {
        csrf: csrfOf(page.text),
        name: 'Lines',
        slug: 'lines-api',
        summary: 'Counting lines',
        base_url: 'https://api.example.com/v1',
        ...fields,
      });
    const endpoints = '# my endpoints\n\nGET /ok 0.05\nFETCH /x';
    const method = await post({ endpoints });
    expect(method.status).toBe(400);
    expect(besideField(method.text, 'endpoints')).toBe(
      'Endpoints, line 4, method: choose one of GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS.',
    );
    expect(method.text).toContain(`${endpoints}</textarea>`);
    expect(method.text).toMatch(/<textarea id="endpoints"[^>]*aria-describedby="endpoints-error endpoints-help"/);
    expect(method.text).toContain('value="Lines"');
    expect(method.text).not.toMatch(RAW_ZOD);

    const both = await post({ name: ' ', endpoints: 'GET /ok\n\nGET no-slash' });
    expect(both.status).toBe(400);
    expect(besideField(both.text, 'name')).toBe('Name: this field is required.');
    expect(besideField(both.text, 'endpoints')).toBe(
      'Endpoints, line 3, path: must start with / and use URL path characters.',
    );
    expect(both.text).toContain('Please correct 2 fields:');
    expect(both.text).not.toMatch(RAW_ZOD);

    const repeated = await post({ endpoints: 'GET /a 0.01\n# again:\nget /a' });
    expect(besideField(repeated.text, 'endpoints')).toBe('Endpoints, line 3: GET /a is already on line 1.');
    const price = await post({ endpoints: 'GET /a 0.011' });
    expect(besideField(price.text, 'endpoints')).toBe(
      'Endpoints, line 1, price: enter a price in dollars with at most 2 decimals, like 0.05.',
    );
    const slug = await post({ slug: 'Bad Slug!', endpoints: 'GET /a' });
    expect(besideField(slug.text, 'slug')).toBe('Slug: must be 1-64 lower-case letters, digits or inner hyphens.');
    expect(inputValue(slug.text, 'slug')).toBe('Bad Slug!');
  });

  it('the usage filters: a refused query comes back as typed, each message beside its filter', async () => {
    const res = await pages.request('GET', '/console/usage?from=2026-02-30&api=Bad%20Slug&outcome=maybe');
    expect(res.status).toBe(400);
    expect(besideField(res.text, 'f-from')).toBe('From: is not a real date.');
    expect(besideField(res.text, 'f-api')).toBe('API (slug): is not an API slug (lowercase letters, digits, dashes).');
    expect(besideField(res.text, 'f-outcome')).toBe('Outcome: choose one of success, failed.');
    expect(inputValue(res.text, 'f-api')).toBe('Bad Slug');
    expect(inputValue(res.text, 'f-from')).toBe('2026-02-30');
    expect(res.text).not.toMatch(RAW_ZOD);
  });

  it('the provider’s analytics range: a refused date comes back beside its field', async () => {
    const res = await pages.request('GET', '/console/provider/analytics?from=someday&to=2026-11-01');
    expect(res.status).toBe(400);
    expect(besideField(res.text, 'from')).toMatch(/^From: /);
    expect(inputValue(res.text, 'from')).toBe('someday');
    expect(inputValue(res.text, 'to')).toBe('2026-11-01');
    expect(res.text).not.toMatch(RAW_ZOD);
  });

  it('sign-in and sign-up: the address kept, the message beside the field, in words', async () => {
    const browser = new FormBrowser(server.url, 'http://leaves.invalid/');
    const login = await browser.request('GET', '/login');
    const bad = await browser.request('POST', '/login', { csrf: csrfOf(login.text), email: 'not-an-address' });
    expect(bad.status).toBe(400);
    expect(inputValue(bad.text, 'email')).toBe('not-an-address');
    expect(besideField(bad.text, 'email')).toBe('Email: must be an email address.');
    expect(bad.text).not.toMatch(RAW_ZOD);

    const code = await browser.request('POST', '/login/verify', {
      csrf: csrfOf(login.text),
      email: owner.email,
      code: '12ab',
    });
    expect(code.status).toBe(400);
    expect(besideField(code.text, 'code')).toBe('Code: must be the 6-digit code from the email.');
    const wrong = await browser.request('POST', '/login/verify', {
      csrf: csrfOf(login.text),
      email: owner.email,
      code: '000000',
    });
    expect(wrong.status).toBe(401);
    expect(besideField(wrong.text, 'code')).toContain('The code is not valid');

    const signup = await browser.request('GET', '/signup');
    const refused = await browser.request('POST', '/signup', {
      csrf: csrfOf(signup.text),
      email: 'ann@',
      name: 'Ann & Co',
    });
    expect(refused.status).toBe(400);
    expect(inputValue(refused.text, 'email')).toBe('ann@');
    expect(inputValue(refused.text, 'name')).toBe('Ann &amp; Co');
    expect(besideField(refused.text, 'email')).toBe('Email: must be an email address.');
    expect(refused.text).not.toMatch(RAW_ZOD);
  });
});
