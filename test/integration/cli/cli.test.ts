// The `svc` CLI as a black box: each test spawns `node bin/svc.js …` (a fresh process, a profile file of its own via
// SVC_CONFIG, HOME in a temporary directory) against a real control plane and gateway, and checks stdout, stderr and
// the exit code: 0 success, 1 an API failure (`code: message` on stderr, the envelope on stdout with --json), 2 a
// usage error.
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { createGatewayHandler, type GatewayHandler } from '../../../gateway/app.js';
import { createPerson } from '../../helpers/accounts.js';
import { ROOT } from '../../helpers/env.js';
import { codeFromMail, startFullStack, tokenFromMail, type FullStack } from '../../helpers/full-stack.js';
import { http, serve } from '../../helpers/http.js';
import type { LiveApi } from '../../helpers/listings.js';
import { createPaidApi } from '../../helpers/fixtures.js';
import { waitFor } from '../../helpers/ports.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';
import { runSvc, shownRun as shown, type SvcRun } from '../../helpers/svc-cli.js';

// Each spawn is a Node start (about 0.4 s idle, seconds on a loaded machine): the long flows get room.
describe('svc CLI (spawned processes)', { timeout: 180_000 }, () => {
  let s: FullStack;
  let gateway: GatewayHandler;
  let gw: RunningHttpServer;
  let upstream: Upstream;
  let api: LiveApi;
  let home: string;

  beforeAll(async () => {
    // No recurring schedules: a catalog rollup between the CLI's read and the route's would change merit scores
    // under the --json comparison (docs/testing.md).
    s = await startFullStack({ schedules: false });
    gateway = createGatewayHandler(s.services);
    gw = await serve(gateway);
    upstream = await startUpstream((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ hello: 'world', path: req.url }));
    });
    api = await createPaidApi(s.services, {
      baseUrl: upstream.url,
      slug: 'clitest-echo',
      endpoints: [
        { method: 'GET', path: '/free', priceCents: 0 },
        { method: 'GET', path: '/paid', priceCents: 5 },
        { method: 'POST', path: '/echo', priceCents: 0 },
      ],
    });
    await s.services.searchIndex.index([api.apiId]);
    home = mkdtempSync(path.join(tmpdir(), 'svc-cli-'));
  });
  afterAll(async () => {
    expect(await s.services.ledger.findDrift()).toEqual([]);
    rmSync(home, { recursive: true, force: true });
    await gw?.close();
    await gateway?.close();
    await upstream?.close();
    await s?.close();
  });

  let profiles = 0;
  /** A fresh profile file path in the temporary HOME (it does not exist until a command writes it). */
  const newProfile = () => path.join(home, `profile-${++profiles}`, 'config.json');

  /** Spawn the CLI with this test's HOME, profile and servers (and `env`). */
  const svc = (args: string[], opts: { profile: string; env?: Record<string, string> }): Promise<SvcRun> =>
    runSvc(args, { HOME: home, SVC_CONFIG: opts.profile, SVC_BASE_URL: s.base, SVC_GATEWAY_URL: gw.url, ...opts.env });

  /** A registered anonymous org with its profile file. */
  async function registered(): Promise<{ profile: string; key: string; orgId: string }> {
    const profile = newProfile();
    const r = await svc(['register'], { profile });
    expect(r.code, shown(r)).toBe(0);
    const saved = JSON.parse(readFileSync(profile, 'utf8')) as { api_key: string; org_id: string };
    return { profile, key: saved.api_key, orgId: saved.org_id };
  }

  it('register saves the key in a 0600 profile, then me and search work with it', async () => {
    const profile = newProfile();
    const reg = await svc(['register'], { profile });
    expect(reg.code, shown(reg)).toBe(0);
    const key = /svc_live_[A-Za-z0-9]{24}/.exec(reg.stdout)?.[0];
    expect(key, shown(reg)).toBeDefined();
    expect(reg.stdout).toMatch(/credits:\s+\$0\.00/);

    expect(statSync(profile).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(profile)).mode & 0o777).toBe(0o700);
    const saved = JSON.parse(readFileSync(profile, 'utf8')) as Record<string, string>;
    expect(saved).toMatchObject({ api_key: key, base_url: s.base, gateway_url: gw.url });

    const me = await svc(['me'], { profile });
    expect(me.code, shown(me)).toBe(0);
    expect(me.stdout).toContain(saved.org_id);
    expect(me.stdout).toMatch(/credits:\s+\$0\.00/);
    expect(me.stdout).toContain(`API key ${key!.slice(0, 12)}`);

    const search = await svc(['search', 'clitest', 'echo'], { profile });
    expect(search.code, shown(search)).toBe(0);
    expect(search.stdout.split('\n')[0]).toMatch(/^SLUG\s+NAME\s+CATEGORY\s+PRICE\s+SCORE\s+CALLABLE\s+SUMMARY$/);
    expect(search.stdout).toMatch(/^clitest-echo\s+clitest-echo\s+-\s+free-\$0\.05\s/m);
  });

  it('--json prints the envelope unchanged (same body as the route, bar the request id)', async () => {
    const { profile } = await registered();
    const r = await svc(['api', api.slug, '--json'], { profile });
    expect(r.code, shown(r)).toBe(0);
    const direct = await http(s.base, 'GET', `/v1/apis/${api.slug}`);
    const printed = JSON.parse(r.stdout) as { meta: { request_id: string } };
    expect(printed.meta.request_id).toMatch(/\S/);
    expect({ ...printed, meta: { ...printed.meta, request_id: 'x' } }).toEqual({
      ...direct.body,
      meta: { ...direct.body.meta, request_id: 'x' },
    });

    const human = await svc(['api', api.slug], { profile });
    expect(human.stdout).toMatch(/^GET\s+\/paid\s+\$0\.05\s/m);
    expect(human.stdout).toMatch(/^GET\s+\/free\s+free\s/m);
  });

  it('call on a free endpoint prints the upstream body and exits 0; the charge note goes to stderr', async () => {
    const { profile } = await registered();
    const r = await svc(['call', api.slug, 'GET', '/free', '--query', 'city=paris', '--query', 'n=2'], { profile });
    expect(r.code, shown(r)).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ hello: 'world', path: '/free?city=paris&n=2' });
    expect(r.stderr).toMatch(/free call/);

    const body = path.join(home, 'body.json');
    writeFileSync(body, '{"a":[1,2]}');
    const posted = await svc(['call', api.slug, 'post', '/echo', '--data', `@${body}`], { profile });
    expect(posted.code, shown(posted)).toBe(0);
    expect(upstream.seen.at(-1)).toMatchObject({ method: 'POST', url: '/echo', body: '{"a":[1,2]}' });
    expect(upstream.seen.at(-1)!.headers['content-type']).toBe('application/json');
  });

  it('call on a paid endpoint with no credit: exit 1, payment_required; with --json the failure envelope', async () => {
    const { profile } = await registered();
    const seen = upstream.seen.length;
    const r = await svc(['call', api.slug, 'GET', '/paid'], { profile });
    expect(r.code, shown(r)).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^payment_required: \S.*\n$/);

    const j = await svc(['--json', 'call', api.slug, 'GET', '/paid'], { profile });
    expect(j.code, shown(j)).toBe(1);
    const env = JSON.parse(j.stdout) as { ok: boolean; error: { code: string; message: string }; meta: object };
    expect(Object.keys(env).sort()).toEqual(['error', 'meta', 'ok']);
    expect(env).toMatchObject({
      ok: false,
      error: { code: 'payment_required' },
      meta: { request_id: expect.any(String) },
    });
    expect(j.stderr).toBe('');
    expect(upstream.seen.length).toBe(seen); // refused before the upstream
  });

  it('a paid call with credit: the charge on stderr, an idempotent retry is a replay', async () => {
    const { profile, orgId } = await registered();
    await s.services.ledger.post({ orgId, kind: 'grant', amountCents: 100 });
    const first = await svc(['call', api.slug, 'GET', '/paid', '--idempotency-key', 'cli-1'], { profile });
    expect(first.code, shown(first)).toBe(0);
    expect(first.stderr).toMatch(/charged \$0\.05 \(\$0\.05 paid from credits\)/);
    const again = await svc(['call', api.slug, 'GET', '/paid', '--idempotency-key', 'cli-1', '--json'], { profile });
    expect(again.code, shown(again)).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ ok: true, data: null, meta: { replayed: true, cost_cents: 5 } });
    const balance = await svc(['balance'], { profile });
    expect(balance.stdout).toMatch(/credits:\s+\$0\.95/);
    // Usage rows arrive through the gateway's drain: poll until the call shows.
    const usage = await waitFor(
      async () => {
        const r = await svc(['usage'], { profile });
        return r.stdout.includes('GET /paid') ? r : false;
      },
      { timeoutMs: 30_000, intervalMs: 500, what: 'the call in svc usage' },
    );
    expect(usage.stdout).toMatch(/^\S+\s+clitest-echo\s+GET \/paid\s+200\s+success\s+\$0\.05\s+\d+$/m);
    expect(usage.stdout).toMatch(/^1 calls \(1 ok\), cost \$0\.05, paid from credits from /m);
  });

  it('usage errors exit 2 with one line on stderr and send nothing', async () => {
    const profile = newProfile();
    const cases: [string[], RegExp][] = [
      [['frobnicate'], /unknown command 'frobnicate'/],
      [['search', '--bogus'], /unknown option '--bogus'/],
      [['call', api.slug], /missing required argument 'method'/],
      [['call', api.slug, 'FETCH', '/free'], /FETCH.*expected GET/],
      [['call', api.slug, 'GET', 'free'], /must start with \//],
      [['call', api.slug, 'POST', '/echo', '--data', '{nope'], /not valid JSON/],
      [['call', api.slug, 'GET', '/free', '--query', 'novalue'], /expected key=value/],
      [['keys', 'create', '--budget', 'lots'], /expected cents/],
      [['checkout'], /exactly one of --pack or --amount/],
      [['--base-url', 'ftp://x', 'me'], /--base-url must be an http\(s\) URL/],
    ];
    const runs = await Promise.all(cases.map(([args]) => svc(args, { profile })));
    for (const [i, [args, message]] of cases.entries()) {
      const r = runs[i]!;
      expect(r.code, `${args.join(' ')}\n${shown(r)}`).toBe(2);
      expect(r.stderr.trimEnd().split('\n'), shown(r)).toHaveLength(1);
      expect(r.stderr, shown(r)).toMatch(message);
      expect(r.stdout).toBe('');
    }
    const help = await svc(['call', '--help'], { profile });
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/call an API through the gateway/);
    const version = await svc(['--version'], { profile });
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('npx svc runs the package bin from the project root', async () => {
    const r = await new Promise<SvcRun>((resolve) => {
      execFile('npx', ['--no-install', 'svc', '--version'], { cwd: ROOT, timeout: 30_000 }, (err, stdout, stderr) =>
        resolve({ code: err ? Number(err.code) : 0, stdout, stderr }),
      );
    });
    expect(r.code, shown(r)).toBe(0);
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(r.stdout.trim()).toBe(pkg.version);
  });

  it('keys create --budget 500 then keys list shows the $5.00 cap; update and revoke', async () => {
    const { profile } = await registered();
    const created = await svc(['keys', 'create', '--name', 'capped', '--budget', '500'], { profile });
    expect(created.code, shown(created)).toBe(0);
    expect(created.stdout).toMatch(/budget:\s+\$5\.00/);
    expect(created.stdout).toMatch(/svc_live_[A-Za-z0-9]{24}/);
    const id = /^id:\s+(\S+)$/m.exec(created.stdout)![1]!;

    const list = await svc(['keys', 'list'], { profile });
    expect(list.code, shown(list)).toBe(0);
    expect(list.stdout.split('\n')[0]).toMatch(
      /^ID\s+NAME\s+PREFIX\s+BUDGET\s+SPENT\s+DAILY\s+TODAY\s+PER CALL\s+PARENT\s+SCOPES\s+STATE$/,
    );
    const row = list.stdout.split('\n').find((l) => l.startsWith(id));
    // Minted with the org's first key: its child (PARENT names that key).
    expect(row, shown(list)).toMatch(/capped\s+svc_live_\S+\s+\$5\.00\s+\$0\.00\s+none\s+\$0\.00\s+none\s+key_\S+\s/);
    expect(list.stderr).toContain("SPENT and TODAY (UTC day) include each key's child keys");
    const json = JSON.parse((await svc(['keys', 'list', '--json'], { profile })).stdout) as {
      data: { id: string; budget_cents: number | null }[];
    };
    expect(json.data.find((k) => k.id === id)?.budget_cents).toBe(500);

    const updated = await svc(['keys', 'update', id, '--budget', '$7.50', '--daily-cap', '100'], { profile });
    expect(updated.code, shown(updated)).toBe(0);
    expect(updated.stdout).toMatch(/budget:\s+\$7\.50/);
    expect(updated.stdout).toMatch(/daily cap:\s+\$1\.00/);

    const revoked = await svc(['keys', 'revoke', id], { profile });
    expect(revoked.code, shown(revoked)).toBe(0);
    const after = await svc(['keys', 'list'], { profile });
    expect(after.stdout).not.toContain(id);
  });

  it("a parent key's SPENT and TODAY both include its child key's spend, labelled so", async () => {
    const { profile, orgId, key: root } = await registered();
    await s.services.ledger.post({ orgId, kind: 'grant', amountCents: 100 });
    // The root key mints a capped parent, the parent (as --key) mints a child; the child spends 5 cents.
    const parent = await svc(['keys', 'create', '--name', 'parent', '--budget', '50', '--daily-cap', '20'], {
      profile,
    });
    expect(parent.code, shown(parent)).toBe(0);
    const parentKey = /svc_live_[A-Za-z0-9]{24}/.exec(parent.stdout)![0];
    const parentId = /^id:\s+(\S+)$/m.exec(parent.stdout)![1]!;
    const child = await svc(['--key', parentKey, 'keys', 'create', '--name', 'child'], { profile });
    expect(child.code, shown(child)).toBe(0);
    expect(child.stdout).toMatch(/daily cap:\s+\$0\.20/); // taken from the parent
    expect(child.stdout).toContain(`parent key:     ${parentId}`);
    const childKey = /svc_live_[A-Za-z0-9]{24}/.exec(child.stdout)![0];
    const call = await svc(['--key', childKey, 'call', api.slug, 'GET', '/paid'], { profile });
    expect(call.code, shown(call)).toBe(0);

    const list = await waitFor(
      async () => {
        const r = await svc(['--key', root, 'keys', 'list'], { profile });
        return r.stdout.split('\n').some((l) => l.startsWith(parentId) && l.includes('$0.05')) ? r : false;
      },
      { timeoutMs: 30_000, intervalMs: 300, what: "the child's call in the parent's row" },
    );
    const parentRow = list.stdout.split('\n').find((l) => l.startsWith(parentId));
    // BUDGET $0.50, SPENT $0.05, DAILY $0.20, TODAY $0.05: the same spend under both rules.
    expect(parentRow, shown(list)).toMatch(/parent\s+svc_live_\S+\s+\$0\.50\s+\$0\.05\s+\$0\.20\s+\$0\.05\s/);
    expect(list.stderr).toContain("SPENT and TODAY (UTC day) include each key's child keys (the keys it minted)");
    const shownKey = await svc(['--key', parentKey, 'keys', 'update', parentId, '--per-call-max', '10'], { profile });
    expect(shownKey.code, shown(shownKey)).toBe(0);
    expect(shownKey.stdout).toMatch(/^spent:\s+\$0\.05 \(incl\. child keys\)$/m);
    expect(shownKey.stdout).toMatch(/^spent today:\s+\$0\.05 \(UTC day, incl\. child keys\)$/m);
  });

  it('an unknown key exits 1 with unauthenticated; --key beats SVC_API_KEY beats the profile', async () => {
    const { profile, orgId } = await registered();
    const bogus = `svc_live_${'Q'.repeat(24)}`;
    const flag = await svc(['--key', bogus, 'me'], { profile });
    expect(flag.code, shown(flag)).toBe(1);
    expect(flag.stderr).toMatch(/^unauthenticated: /);
    const env = await svc(['me'], { profile, env: { SVC_API_KEY: bogus } });
    expect(env.code, shown(env)).toBe(1);
    expect(env.stderr).toMatch(/^unauthenticated: /);
    const other = await registered();
    const both = await svc(['--key', other.key, 'me'], { profile, env: { SVC_API_KEY: bogus } });
    expect(both.code, shown(both)).toBe(0);
    expect(both.stdout).toContain(other.orgId);
    expect(both.stdout).not.toContain(orgId);
  });

  it('a server that does not answer: exit 1 with network_error', async () => {
    const r = await svc(['--base-url', 'http://127.0.0.1:9', 'categories'], { profile: newProfile() });
    expect(r.code, shown(r)).toBe(1);
    expect(r.stderr).toMatch(/^network_error: cannot reach http:\/\/127\.0\.0\.1:9/);
    const j = await svc(['--json', '--base-url', 'http://127.0.0.1:9', 'categories'], { profile: newProfile() });
    expect(JSON.parse(j.stdout)).toMatchObject({ ok: false, error: { code: 'network_error' } });
  });

  it('catalog reads: categories, schema, openapi, quote, leaderboard, terms', async () => {
    const profile = newProfile();
    const cats = await svc(['categories'], { profile });
    expect(cats.code, shown(cats)).toBe(0);
    expect(cats.stdout.split('\n')[0]).toMatch(/^SLUG\s+NAME\s+APIS$/);

    const schema = await svc(['schema', api.slug], { profile });
    expect(schema.code, shown(schema)).toBe(0);
    expect(schema.stdout).toContain(`GET /paid\n  call: ${s.config.urls.gateway}/v1/proxy/${api.slug}/paid`);
    const openapi = await svc(['schema', api.slug, '--openapi'], { profile });
    expect(openapi.code, shown(openapi)).toBe(0);
    expect(JSON.parse(openapi.stdout)).toMatchObject({ openapi: expect.stringMatching(/^3\.0/) });

    const quote = await svc(['quote', api.slug, 'get', '/paid'], { profile });
    expect(quote.code, shown(quote)).toBe(0);
    expect(quote.stdout).toMatch(/price:\s+\$0\.05/);
    const missing = await svc(['quote', api.slug, 'GET', '/nope'], { profile });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^not_found: /);

    const board = await svc(['leaderboard', 'most_used'], { profile });
    expect(board.code, shown(board)).toBe(0);
    const badBoard = await svc(['leaderboard', 'loudest'], { profile });
    expect(badBoard.code).toBe(1);
    expect(badBoard.stderr).toMatch(/^validation_failed: Unknown board/);

    const terms = await svc(['terms', api.slug], { profile });
    expect(terms.code, shown(terms)).toBe(0);
    expect(terms.stdout).toBe('No terms for this API.\n');
  });

  it('signup, verify-email, login with --code, provider commands, logout ends the session', async () => {
    const profile = newProfile();
    const email = `cli-${Date.now()}@example.com`;
    const signup = await svc(['signup', '--email', email, '--name', 'Cli Person'], { profile });
    expect(signup.code, shown(signup)).toBe(0);
    expect(signup.stdout).toMatch(/withheld:\s+\$1\.00 until you verify your email/);
    const token = tokenFromMail((await s.smtp.waitForMail(email, { subject: /Verify/ })).text);
    const verified = await svc(['verify-email', token], { profile });
    expect(verified.code, shown(verified)).toBe(0);
    expect(verified.stdout).toMatch(/scopes added:\s+.*provider:write/);

    // Without a terminal, login mails the code and says how to finish.
    const asked = await svc(['login', '--email', email], { profile });
    expect(asked.code, shown(asked)).toBe(0);
    expect(asked.stdout).toMatch(/svc login --email \S+ --code <code>/);
    const code = codeFromMail((await s.smtp.waitForMail(email, { subject: /sign-in code/ })).text);
    const login = await svc(['login', '--email', email, '--code', code], { profile });
    expect(login.code, shown(login)).toBe(0);
    const saved = JSON.parse(readFileSync(profile, 'utf8')) as Record<string, string>;
    expect(saved.session_token).toMatch(/^sess_/);
    expect(saved.api_key).toMatch(/^svc_live_/); // same org: the key stays for the gateway
    expect(statSync(profile).mode & 0o777).toBe(0o600);
    const me = await svc(['me'], { profile });
    expect(me.stdout).toMatch(new RegExp(`user:\\s+${email} \\(owner, verified\\)`));
    expect(me.stdout).toMatch(/credential:\s+session/);

    const created = await svc(
      [
        'provider',
        'create',
        '--name',
        'Cli Weather',
        '--slug',
        'cli-weather',
        '--summary',
        'Weather from the CLI',
        '--upstream',
        upstream.url,
        '--endpoint',
        'GET /today=$0.03',
        '--endpoint',
        'GET /free',
      ],
      { profile },
    );
    expect(created.code, shown(created)).toBe(0);
    expect(created.stdout).toMatch(/status:\s+draft/);
    const apiId = /^api:\s+(\S+) \(cli-weather\)$/m.exec(created.stdout)![1]!;
    const endpointId = /^(\S+)\s+GET\s+\/today\s+\$0\.03$/m.exec(created.stdout)![1]!;

    const list = await svc(['provider', 'apis'], { profile });
    expect(list.stdout).toMatch(new RegExp(`^${apiId}\\s+cli-weather\\s+Cli Weather\\s+draft\\s+2\\s`, 'm'));
    const creds = await svc(['provider', 'credentials', apiId, '--secret', 'sekret'], { profile });
    expect(creds.code, shown(creds)).toBe(0);
    const pricing = await svc(['provider', 'pricing', apiId, '--price', `${endpointId}=4`], { profile });
    expect(pricing.code, shown(pricing)).toBe(0);
    // Commands that name an API take its slug too (one of the caller's own).
    const shownApi = await svc(['provider', 'apis', 'cli-weather'], { profile });
    expect(shownApi.stdout).toMatch(/credential:\s+set \(bearer\)/);
    expect(shownApi.stdout).toContain(`api:           ${apiId} (cli-weather)`);
    const notMine = await svc(['provider', 'verify', 'clitest-echo'], { profile });
    expect(notMine.code, shown(notMine)).toBe(1);
    expect(notMine.stderr).toMatch(/^not_found: None of your APIs has the slug clitest-echo/);

    const doc = await svc(
      [
        'provider',
        'documents',
        'create',
        '--kind',
        'terms',
        '--doc-version',
        '1',
        '--body',
        '# Terms',
        '--api-id',
        apiId,
        '--acceptance-mode',
        'required',
      ],
      { profile },
    );
    expect(doc.code, shown(doc)).toBe(0);
    const docId = /^document:\s+(\S+)$/m.exec(doc.stdout)![1]!;
    const docs = await svc(['provider', 'documents'], { profile });
    expect(docs.stdout).toMatch(new RegExp(`^${docId}\\s+terms\\s+1\\s+draft\\s+required\\s`, 'm'));
    const activated = await svc(['provider', 'documents', 'activate', docId], { profile });
    expect(activated.code, shown(activated)).toBe(0);
    expect(activated.stdout).toMatch(/status:\s+active/);

    const published = await svc(['provider', 'publish', 'cli-weather', '--accept-terms', '--skip-verify'], {
      profile,
    });
    expect(published.code, shown(published)).toBe(0);
    expect(published.stdout).toMatch(/status:\s+live/);
    const noTerms = await svc(['provider', 'publish', apiId], { profile });
    expect(noTerms.code).toBe(2);

    // A consumer (a signed-in owner: session and key in the profile) meets the required terms, accepts, calls.
    const consumer = await createPerson(s.services);
    const consumerProfile = newProfile();
    mkdirSync(path.dirname(consumerProfile), { recursive: true });
    // As `svc login` saves it: the credentials with the URLs of the servers that issued them (docs/cli.md).
    writeFileSync(
      consumerProfile,
      JSON.stringify({
        base_url: s.base,
        gateway_url: gw.url,
        api_key: consumer.apiKey,
        session_token: consumer.session,
      }),
    );
    const refused = await svc(['call', 'cli-weather', 'GET', '/free'], { profile: consumerProfile });
    expect(refused.code, shown(refused)).toBe(1);
    expect(refused.stderr).toMatch(/^terms_acceptance_required: .+ \(http:\/\/\S+\)\n$/);
    const terms = await svc(['terms', 'cli-weather'], { profile: consumerProfile });
    expect(terms.stdout).toMatch(new RegExp(`^${docId}\\s+terms\\s+1\\s+required\\s+no\\b`, 'm'));
    const accept = await svc(['terms', 'cli-weather', '--accept'], { profile: consumerProfile });
    expect(accept.code, shown(accept)).toBe(0);
    expect(accept.stdout).toBe(`Accepted terms 1 (${docId}).\n`);
    const called = await svc(['call', 'cli-weather', 'GET', '/free'], { profile: consumerProfile });
    expect(called.code, shown(called)).toBe(0);
    expect(JSON.parse(called.stdout)).toEqual({ hello: 'world', path: '/free' });
    // The quote answers for the key `svc call` sends (the gateway refuses sessions): no credit, not "unauthenticated".
    const quoted = await svc(['quote', 'cli-weather', 'GET', '/today'], { profile: consumerProfile });
    expect(quoted.code, shown(quoted)).toBe(0);
    expect(quoted.stdout).toMatch(/^admission:\s+refused: payment_required: /m);

    const analytics = await svc(['provider', 'analytics'], { profile });
    expect(analytics.code, shown(analytics)).toBe(0);
    expect(analytics.stdout).toMatch(/gmv:\s+\$0\.00/);
    // Earnings to date and where they go, in words (issue 31, section 5).
    expect(analytics.stdout).toMatch(/^earned to date:\s+\$0\.00 \(fee \$0\.00, net \$0\.00\)$/m);
    expect(analytics.stdout).toMatch(/^available:\s+\$0\.00$/m);

    const logout = await svc(['logout'], { profile });
    expect(logout.code, shown(logout)).toBe(0);
    expect(() => statSync(profile)).toThrow();
    const stale = await http(s.base, 'GET', '/v1/me', { token: saved.session_token });
    expect(stale.status).toBe(401);
  });

  it('login on a terminal asks for the mailed code and stores the session', async () => {
    const person = await createPerson(s.services);
    const profile = newProfile();
    const env = { PATH: process.env.PATH ?? '', HOME: home, SVC_CONFIG: profile, SVC_BASE_URL: s.base };
    // util-linux `script` gives the CLI a pseudo-terminal, as a person's shell would.
    const child = spawn('script', ['-qec', `node bin/svc.js login --email ${person.email}`, '/dev/null'], {
      cwd: ROOT,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const mail = await s.smtp.waitForMail(person.email, { subject: /sign-in code/ });
    await waitFor(() => Promise.resolve(output.includes('Code: ')), { timeoutMs: 20_000, what: 'the code prompt' });
    child.stdin.write(`${codeFromMail(mail.text)}\n`);
    expect(await exited, output).toBe(0);
    expect(output).toMatch(new RegExp(`signed in:\\s+${person.email}`));
    const saved = JSON.parse(readFileSync(profile, 'utf8')) as Record<string, string>;
    expect(saved).toMatchObject({
      org_id: person.orgId,
      email: person.email,
      session_token: expect.stringMatching(/^sess_/),
    });
  });

  it('provider commands with an anonymous key: exit 1 forbidden', async () => {
    const { profile } = await registered();
    const r = await svc(['provider', 'apis'], { profile });
    expect(r.code, shown(r)).toBe(1);
    expect(r.stderr).toMatch(/^forbidden: /);
    const checkout = await svc(['checkout', '--pack', 'starter'], { profile });
    expect(checkout.code, shown(checkout)).toBe(1);
    expect(checkout.stderr).toMatch(/^forbidden: /);
    const packs = await svc(['packs'], { profile });
    expect(packs.code, shown(packs)).toBe(0);
    expect(packs.stdout).toMatch(/^starter\s+\$5\.00\s+\$5\.00$/m);
  });
});
