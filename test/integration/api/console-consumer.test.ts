// The console's consumer sections (Overview, Keys, Usage, Billing) over plain HTTP, without a browser: signed out
// they send the person to /login and back; forms refuse a missing CSRF token; a new org sees clear empty states; key
// forms create (Post/Redirect/Get: the secret shown once, on the page the 303 leads to), edit caps and revoke (after a
// confirmation step) with Post/Redirect/Get; the same
// role rules as the API (a member cannot approve spend nor loosen caps); bad filters are a 400 page, never a 500.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../../api/app.js';
import { csvField } from '../../../api/pages/console/usage.page.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { sql } from '../../helpers/db.js';
import { csrfOf, FormBrowser } from '../../helpers/form-browser.js';
import { signInByMail } from '../../helpers/console-forms.js';
import { serve } from '../../helpers/http.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';
import { startSmtpCapture, type SmtpCapture } from '../../helpers/smtp.js';
import { closeAll } from '../../helpers/fixtures.js';

describe('console: consumer sections over HTTP', () => {
  let stack: TestStack;
  let smtp: SmtpCapture;
  let server: RunningHttpServer;
  let owner: Person;
  let member: Person;
  let ownerPages: FormBrowser;
  let memberPages: FormBrowser;

  /** Sign in through /login with the mailed code, as a person would; the browser keeps the session cookie. */
  async function signIn(email: string): Promise<FormBrowser> {
    const { browser, done } = await signInByMail(server.url, smtp, email, '/console');
    expect(done.location).toBe('/console');
    return browser;
  }

  /** GET a console page and post one of its forms (the CSRF token from the page). */
  async function submit(b: FormBrowser, pagePath: string, action: string, fields: Record<string, string>) {
    const csrf = csrfOf((await b.request('GET', pagePath)).text);
    expect(csrf).not.toBe('');
    return b.request('POST', action, { csrf, ...fields });
  }
  /** The owner's new-key form on /console/keys: the key's name and the other fields. */
  const createKey = (name: string, fields: Record<string, string>) =>
    submit(ownerPages, '/console/keys', '/console/keys', { name, ...fields });

  beforeAll(async () => {
    smtp = await startSmtpCapture();
    stack = await createTestStack({ env: { SMTP_URL: smtp.url } });
    server = await serve(createApiApp(stack.services).callback());
    owner = await createPerson(stack.services);
    member = await createPerson(stack.services, { role: 'member', orgId: owner.orgId });
    // A new org: its only key (from signup) is revoked, so every section is empty.
    await stack.services.keyAdmin.revoke(
      { type: 'api_key', orgId: owner.orgId, keyId: owner.keyId, keyPrefix: '', scopes: [] },
      owner.keyId,
    );
    await stack.services.keyAdmin.revoke(
      { type: 'api_key', orgId: owner.orgId, keyId: member.keyId, keyPrefix: '', scopes: [] },
      member.keyId,
    );
    ownerPages = await signIn(owner.email);
    memberPages = await signIn(member.email);
  });
  afterAll(async () => {
    if (stack) expect(await stack.services.ledger.findDrift()).toEqual([]);
    await closeAll(server, stack, smtp);
  });

  it('signed out: every section answers 303 to /login, coming back to the page (forms come back to their section)', async () => {
    const anon = new FormBrowser(server.url, 'http://leaves.invalid/');
    for (const path of [
      '/console',
      '/console/keys',
      '/console/usage?outcome=failed',
      '/console/billing',
      '/console/usage.csv',
    ]) {
      const res = await anon.request('GET', path);
      expect(res.status, path).toBe(303);
      expect(res.location, path).toBe(`/login?next=${encodeURIComponent(path)}`);
    }
    const post = await anon.request('POST', '/console/keys/key_x/caps', { csrf: 'x', budget: '1' });
    expect(post.status).toBe(303);
    expect(post.location).toBe(`/login?next=${encodeURIComponent('/console/keys')}`);
  });

  it("says who is signed in, titles a section once, and collapses the charts' data tables (issue 22)", async () => {
    const overview = await ownerPages.request('GET', '/console');
    expect(overview.text).toContain('<title>Overview · API marketplace</title>');
    expect(overview.text).toContain(`${owner.email} · owner`);
    // A table ignores height and overflow unless it is a block: the hidden data tables left a page of blank space.
    expect(overview.text).toContain('table.visually-hidden { display: block; }');
  });

  it('a form without its CSRF token (or with a forged one) is a 403 page and changes nothing', async () => {
    for (const [action, fields] of [
      ['/console/keys', { name: 'forged' }],
      ['/console/billing/auto-reload', { enabled: 'on', threshold: '1', amount: '5' }],
      ['/console/billing/checkout', { pack: 'starter' }],
    ] as const) {
      for (const csrf of [undefined, 'A'.repeat(32)]) {
        const res = await ownerPages.request('POST', action, csrf ? { ...fields, csrf } : fields);
        expect(res.status, action).toBe(403);
        expect(res.headers.get('content-type')).toMatch(/text\/html/);
        expect(res.text).toContain('This form has expired');
      }
    }
    const [row] = await sql<{ n: string }>(stack.db.url, "select count(*) as n from api_keys where name = 'forged'");
    expect(row!.n).toBe('0');
  });

  it('a new org: each section renders its empty state under the strict CSP', async () => {
    const expectations: [string, RegExp][] = [
      ['/console', /No calls in the last 30 days/],
      ['/console/keys', /No keys yet/],
      ['/console/usage', /No calls match these filters/],
      ['/console/billing', /No credit movements yet/],
    ];
    for (const [path, empty] of expectations) {
      const res = await ownerPages.request('GET', path);
      expect(res.status, path).toBe(200);
      expect(res.text, path).toMatch(empty);
      expect(res.headers.get('content-security-policy'), path).toMatch(/default-src 'none'/);
      expect(res.text, path).not.toMatch(/<script/i);
    }
    // Keys: nothing waits for approval; Billing: no Stripe configured here, said plainly; prepaid $0.00 is low.
    const keys = await ownerPages.request('GET', '/console/keys');
    expect(keys.text).toContain('nothing waits for approval');
    const billing = await ownerPages.request('GET', '/console/billing');
    expect(billing.text).toContain('Payments are not configured');
    expect(billing.text).toContain('Low balance: $0.00');
    expect(billing.headers.get('content-security-policy')).toContain("form-action 'self' https://checkout.stripe.com");
    const csv = await ownerPages.request('GET', '/console/usage.csv');
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(csv.headers.get('content-disposition')).toMatch(/^attachment; filename="usage-\d{4}-\d{2}-\d{2}-to-/);
    expect(csv.text.split('\r\n')[0]).toBe(
      'created_at,request_id,key_id,key_name,api_slug,method,path,status,outcome,cost_cents,cost_usd,billable_cents,billable_usd,latency_ms',
    );
  });

  it('create a key with caps (secret shown once, after the 303), edit its caps, revoke it', async () => {
    const posted = await createKey('Crawler <b>', {
      budget: '12.50',
      daily_cap: '2',
      per_call_max: '0.05',
      approval_mode: 'on',
    });
    expect(posted).toMatchObject({ status: 303, location: '/console/keys?done=created' });
    const created = await ownerPages.request('GET', posted.location!);
    const secret = /id="secret" readonly[^>]* value="([^"]+)"/.exec(created.text)?.[1];
    expect(secret).toMatch(/^svc_(live|test)_/);
    expect(created.text).toContain('Crawler &lt;b&gt;');
    const [key] = await sql<Record<string, string | boolean>>(
      stack.db.url,
      "select id, budget_cents, daily_cap_cents, per_call_max_cents, approval_mode from api_keys where name = 'Crawler <b>'",
    );
    expect(key).toMatchObject({
      budget_cents: '1250',
      daily_cap_cents: '200',
      per_call_max_cents: '5',
      approval_mode: true,
    });
    // The secret is never in a URL nor on the list page afterwards.
    const list = await ownerPages.request('GET', '/console/keys');
    expect(list.text).not.toContain(secret);
    expect(list.text).toContain('$0.00 / $12.50');
    expect(list.text).toContain('Waiting for approval');

    const edited = await submit(ownerPages, '/console/keys', `/console/keys/${key!.id as string}/caps`, {
      budget: '20',
      daily_cap: '',
      per_call_max: '0.10',
    });
    expect(edited.status).toBe(303);
    expect(edited.location).toBe('/console/keys?done=caps');
    expect((await ownerPages.request('GET', edited.location!)).text).toContain('Caps saved.');
    const [after] = await sql<Record<string, string | boolean | null>>(
      stack.db.url,
      'select budget_cents, daily_cap_cents, per_call_max_cents, approval_mode from api_keys where id = $1',
      [key!.id],
    );
    expect(after).toEqual({
      budget_cents: '2000',
      daily_cap_cents: null,
      per_call_max_cents: '10',
      approval_mode: false,
    });

    const bad = await submit(ownerPages, '/console/keys', `/console/keys/${key!.id as string}/caps`, {
      budget: 'lots',
    });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('Budget: enter an amount in dollars');
    expect(bad.text).toContain('href="/console/keys"');

    const revoked = await submit(ownerPages, '/console/keys', `/console/keys/${key!.id as string}/revoke`, {
      confirm: 'yes',
    });
    expect(revoked).toMatchObject({ status: 303, location: '/console/keys?done=revoked' });
    const [gone] = await sql(stack.db.url, 'select revoked_at is not null as revoked from api_keys where id = $1', [
      key!.id,
    ]);
    expect(gone).toEqual({ revoked: true });
  });

  it('a key with fewer scopes: the ticked boxes; none ticked is a 400 page', async () => {
    const created = await createKey('proxy only', { scopes_listed: '1', scope: 'proxy:call' });
    expect(created.status).toBe(303);
    const [key] = await sql(stack.db.url, "select scopes from api_keys where name = 'proxy only'");
    expect(key).toEqual({ scopes: ['proxy:call'] });
    const none = await createKey('no scopes', { scopes_listed: '1' });
    expect(none.status).toBe(400);
    expect(none.text).toContain('Scopes: choose at least one.');
  });

  it('a member sees no Approve button, and posting the form anyway is refused (403 page); nor may it loosen caps', async () => {
    const created = await createKey('needs approval', { budget: '1', approval_mode: 'on' });
    expect(created.status).toBe(303);
    const [key] = await sql<{ id: string }>(stack.db.url, "select id from api_keys where name = 'needs approval'");
    const page = await memberPages.request('GET', '/console/keys');
    expect(page.text).toContain('Waiting for approval');
    expect(page.text).toContain('Only an owner or admin');
    expect(page.text).not.toContain(`/console/keys/${key!.id}/approve`);

    const refused = await submit(memberPages, '/console/keys', `/console/keys/${key!.id}/approve`, { amount: '1' });
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('Only an owner or admin of the organization can approve spend.');
    const loosen = await submit(memberPages, '/console/keys', `/console/keys/${key!.id}/caps`, {
      budget: '',
      approval_mode: 'on',
    });
    expect(loosen.status).toBe(403);
    expect(loosen.text).toContain('needs an owner or admin');
    const [row] = await sql(stack.db.url, 'select approved_cents, budget_cents from api_keys where id = $1', [key!.id]);
    expect(row).toEqual({ approved_cents: '0', budget_cents: '100' });

    // The owner's page has the button, and it works.
    expect((await ownerPages.request('GET', '/console/keys')).text).toContain(`/console/keys/${key!.id}/approve`);
    const approved = await submit(ownerPages, '/console/keys', `/console/keys/${key!.id}/approve`, { amount: '0.75' });
    expect(approved).toMatchObject({ status: 303, location: '/console/keys?done=approved' });
    const [after] = await sql(stack.db.url, 'select approved_cents from api_keys where id = $1', [key!.id]);
    expect(after).toEqual({ approved_cents: '75' });
  });

  it('bad filters and pages are a 400 page naming the field, never a 500', async () => {
    for (const [path, message] of [
      ['/console/usage?from=2026-02-30', /is not a real date/],
      ['/console/usage?from=yesterday', /must be a date/],
      ['/console/usage?from=2026-11-20&to=2026-11-01', /must be before/],
      ['/console/usage?from=2020-01-01&to=2026-01-01', /at most 366 days/],
      ['/console/usage?outcome=maybe', /outcome/],
      ['/console/usage?key=nope', /not a key id/],
      ['/console/usage.csv?api=Bad%20Slug', /not an API slug/],
      ['/console/usage?page=0', /page/],
      ['/console/billing?page=x', /page/],
    ] as const) {
      const res = await ownerPages.request('GET', path);
      expect(res.status, path).toBe(400);
      expect(res.headers.get('content-type'), path).toMatch(/text\/html/);
      expect(res.text, path).toMatch(message);
    }
  });

  it('auto-reload needs a card first (409 page); bad amounts are a 400 page', async () => {
    const res = await submit(ownerPages, '/console/billing', '/console/billing/auto-reload', {
      enabled: 'on',
      threshold: '2',
      amount: '10',
    });
    expect(res.status).toBe(409);
    expect(res.text).toContain('Add a payment method');
    const bad = await submit(ownerPages, '/console/billing', '/console/billing/auto-reload', {
      enabled: 'on',
      threshold: '-1',
      amount: '10',
    });
    expect(bad.status).toBe(400);
  });

  it('with history: per-day series fill missing days with 0, filters and CSV agree, ledger history pages', async () => {
    const p = await createPerson(stack.services);
    const pages = await signIn(p.email);
    const day = (ago: number) => new Date(Date.now() - ago * 86_400_000).toISOString().slice(0, 10);
    const rows: [string, string, string, string, number, number][] = [
      // [day, api, path, outcome, status, cost]
      [day(0), 'alpha', '/a,b"c', 'success', 200, 7],
      [day(0), 'alpha', '/a,b"c', 'success', 200, 7],
      [day(0), 'beta', '/fails', 'failed', 502, 0],
      [day(3), 'alpha', '/older', 'success', 200, 10],
      [day(40), 'alpha', '/oldest', 'success', 200, 100],
    ];
    for (const [i, [d, api, path, outcome, status, cost]] of rows.entries()) {
      await sql(
        stack.db.url,
        `insert into usage_events (id, org_id, key_id, api_slug, method, path, status, outcome, cost_cents,
                                   latency_ms, request_id, created_at)
         values ($1, $2, $3, $4, 'GET', $5, $6, $7, $8, 12, $9, $10::timestamptz)`,
        [
          `use_seed_${p.orgId.slice(-12)}_${i}`,
          p.orgId,
          p.keyId,
          api,
          path,
          status,
          outcome,
          cost,
          `req_seed_${i}`,
          `${d}T00:00:0${i}Z`,
        ],
      );
    }

    const overview = await pages.request('GET', '/console');
    expect(overview.status).toBe(200);
    const spendTable = /<caption>Spend per day[^<]*<\/caption>.*?<tbody>(.*?)<\/tbody>/s.exec(overview.text)?.[1] ?? '';
    const cells = [...spendTable.matchAll(/<th scope="row">([^<]+)<\/th><td>([^<]+)<\/td>/g)].map((m) => [m[1], m[2]]);
    expect(cells).toHaveLength(30);
    expect(cells.at(-1)).toEqual([day(0), '$0.14']);
    expect(cells.at(-4)).toEqual([day(3), '$0.10']);
    expect(cells.at(-2)).toEqual([day(1), '$0.00']);
    expect(overview.text).toContain('25.0%'); // 1 failed of 4 calls in 30 days (the 40-day-old call is outside)

    const filtered = await pages.request('GET', '/console/usage?api=alpha&outcome=success');
    expect(filtered.text).toContain('3 calls · 0 failed · $0.24 spent');
    expect(filtered.text).toContain(
      `href="/console/usage.csv?api=alpha&amp;from=${day(29)}&amp;to=${day(0)}&amp;outcome=success"`,
    );
    const csv = await pages.request('GET', `/console/usage.csv?api=alpha&from=${day(60)}`);
    const lines = csv.text.trimEnd().split('\r\n');
    expect(lines).toHaveLength(1 + 4);
    expect(lines[1]).toContain(',/oldest,200,success,100,1.00,0,0.00,12');
    expect(lines[3]).toContain(',test,alpha,GET,"/a,b""c",200,success,7,0.07,');

    for (let i = 0; i < 30; i++) {
      await stack.services.ledger.post({ orgId: p.orgId, kind: 'grant', amountCents: 1 + i, memo: `grant ${i}` });
    }
    const first = await pages.request('GET', '/console/billing');
    expect(first.text.match(/<td>Credit grant<\/td>/g)).toHaveLength(25);
    expect(first.text).toContain('grant 29');
    expect(first.text).toContain('href="/console/billing?page=2#history"');
    const second = await pages.request('GET', '/console/billing?page=2');
    expect(second.text.match(/<td>Credit grant<\/td>/g)).toHaveLength(5);
    expect(second.text).toContain('grant 0');
    expect((await pages.request('GET', '/console/billing?page=9')).text).toContain('No entries on this page');
  });

  it('banners: suspension with its reason; low balance by the rules of docs/console.md; an unverified person is told to verify', async () => {
    const p = await createPerson(stack.services);
    const pages = await signIn(p.email);
    const banners = async () => {
      const html = (await pages.request('GET', '/console')).text;
      return [...html.matchAll(/<div class="banner (\w+)" role="\w+">(.*?)<\/div>/gs)].map((m) => [m[1], m[2]]);
    };
    // Prepaid, auto-reload off: below $1.00 is low.
    await stack.services.ledger.post({ orgId: p.orgId, kind: 'grant', amountCents: 99 });
    expect(await banners()).toEqual([['warn', expect.stringContaining('Low balance: $0.99.')]]);
    await stack.services.ledger.post({ orgId: p.orgId, kind: 'grant', amountCents: 1 });
    expect(await banners()).toEqual([]);
    // Auto-reload on: below its threshold is low (a reload is on its way), whatever the $1.00 rule says.
    await sql(
      stack.db.url,
      'update orgs set auto_reload_enabled = true, auto_reload_threshold_cents = 500, auto_reload_amount_cents = 1000 where id = $1',
      [p.orgId],
    );
    expect(await banners()).toEqual([
      [
        'warn',
        expect.stringContaining('below your auto-reload threshold ($5.00), so a reload of $10.00 is on its way'),
      ],
    ]);
    // Card on file: no low-balance banner. Suspended: the reason and what to do, on every consumer section.
    await sql(
      stack.db.url,
      "update orgs set billing_mode = 'card', suspended = true, suspended_reason = 'card <declined>' where id = $1",
      [p.orgId],
    );
    const [[kind, text]] = (await banners()) as [[string, string]];
    expect(kind).toBe('bad');
    expect(text).toContain('This organization is suspended: all its calls are refused, free ones too.');
    expect(text).toContain('Reason: card &lt;declined&gt;.');
    for (const path of ['/console/keys', '/console/usage', '/console/billing']) {
      expect((await pages.request('GET', path)).text, path).toContain('This organization is suspended');
    }

    const unverified = await createPerson(stack.services, { verified: false });
    // (Its session straight from the helper: signing in an unverified person starts a workflow this stack lacks.)
    const res = await fetch(`${server.url}/console/billing`, {
      headers: { cookie: `svc_session=${unverified.session}` },
    });
    const billing = { status: res.status, text: await res.text() };
    expect(billing.status).toBe(200);
    expect(billing.text).toContain('Verify your email');
    expect(billing.text).not.toContain('action="/console/billing/checkout"');
  });

  it('CSV fields: quoted when needed, formulas neutralised', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('line\nbreak')).toBe('"line\nbreak"');
    expect(csvField('=SUM(A1)')).toBe("'=SUM(A1)");
    expect(csvField(-5)).toBe('-5');
    expect(csvField(null)).toBe('');
  });
});
