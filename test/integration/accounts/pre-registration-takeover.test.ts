// Pre-registration takeover (issue 21, item 1). An attacker signs up with the victim's address and holds a key, a
// child key, a session and an agent-tool session before the address is proven. Each way the victim proves the address
// is tried: a sign-in code and an OAuth approval's code revoke everything made before the proof (and mail the list);
// the verification link and the attach link still elevate the key that asked, but their mail and page say exactly
// what clicking does, and opening the page changes nothing. Unverified signups expire after 24 hours and free their
// address. Real Postgres, Redis, Temporal, SMTP, gateway, agent-tool server and MCP SDK client.
import { createHash, randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorker, type RunningWorker } from '../../../activities/worker.js';
import { createApiApp } from '../../../api/app.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { createGatewayHandler, type GatewayHandler } from '../../../gateway/app.js';
import { createMcpApp, type McpSurface } from '../../../mcp/app.js';
import { createPerson } from '../../helpers/accounts.js';
import { sql } from '../../helpers/db.js';
import { csrfOf, FormBrowser } from '../../helpers/form-browser.js';
import { codeFromMail, tokenFromMail } from '../../helpers/full-stack.js';
import { expectFailure, http, serve, describe as show } from '../../helpers/http.js';
import type { LiveApi } from '../../helpers/listings.js';
import { freePort } from '../../helpers/ports.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';
import { startSmtpCapture, type SmtpCapture } from '../../helpers/smtp.js';
import { startTemporal, workflowBundle } from '../../helpers/temporal.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createPaidApi, closeAll } from '../../helpers/fixtures.js';

const redisPrefix = (s: TestStack) => s.config.counters.keyPrefix;
const REDIRECT = 'http://127.0.0.1:47998/callback';
const EXTRA = ['billing:write', 'provider:write'];

describe('pre-registration takeover', () => {
  let stack: TestStack;
  let gatewayStack: TestStack;
  let temporal: TestWorkflowEnvironment;
  let worker: RunningWorker;
  let smtp: SmtpCapture;
  let upstream: Upstream;
  let api: RunningHttpServer;
  let mcpServer: RunningHttpServer;
  let mcp: McpSurface;
  let gateway: GatewayHandler;
  let gw: RunningHttpServer;
  let listing: LiveApi;
  let base: string;
  let n = 0;
  const victim = (tag: string) => `victim-${tag}-${++n}-${randomBytes(3).toString('hex')}@example.com`;

  beforeAll(async () => {
    smtp = await startSmtpCapture();
    upstream = await startUpstream();
    const started = await startTemporal();
    temporal = started.env;
    const [apiPort, mcpPort] = [await freePort(), await freePort()];
    base = `http://127.0.0.1:${apiPort}`;
    stack = await createTestStack({
      temporalAddress: started.address,
      env: { SMTP_URL: smtp.url, PUBLIC_BASE_URL: base, MCP_URL: `http://127.0.0.1:${mcpPort}` },
    });
    worker = await startWorker(stack.services, { workflowBundle });
    api = await serve(createApiApp(stack.services).callback(), apiPort, 'api');
    mcp = createMcpApp(stack.services);
    mcpServer = await serve(mcp.app.callback(), mcpPort, 'mcp');
    // The gateway runs on its own services (one process's metrics hold one gateway or one agent-tool server), on the
    // same database and Redis prefix: it hears key invalidations as a separate gateway process would.
    gatewayStack = await createTestStack({
      db: stack.db,
      temporalAddress: started.address,
      env: { REDIS_KEY_PREFIX: redisPrefix(stack), PUBLIC_BASE_URL: base },
    });
    gateway = createGatewayHandler(gatewayStack.services);
    gw = await serve(gateway);
    const provider = await createPerson(stack.services);
    listing = await createPaidApi(stack.services, {
      provider: provider,
      baseUrl: upstream.url,
      endpoints: [{ method: 'GET', path: '/free', priceCents: 0 }],
    });
  });
  afterAll(async () => {
    // The starter credit is released to the proven owner: the books hold.
    if (stack) expect(await stack.services.ledger.findDrift()).toEqual([]);
    await closeAll(mcp, mcpServer, gw, gateway, gatewayStack, api);
    await worker?.shutdown();
    await stack?.close();
    await temporal?.teardown();
    await upstream?.close();
    await smtp?.close();
  });

  interface Attacker {
    orgId: string;
    key: string;
    keyId: string;
    childKey: string;
    childKeyId: string;
    session: string;
    mcpClient: Client;
  }

  /** The attacker signs up with the victim's address and sets up what they can before the address is proven. */
  async function attackerSignsUp(address: string): Promise<Attacker> {
    const res = await http(base, 'POST', '/v1/signup', { body: { email: address, name: 'Evil Org' } });
    expect(res.status, show(res)).toBe(201);
    const d = res.body.data;
    const child = await http(base, 'POST', '/v1/keys', {
      token: d.api_key,
      body: { name: 'stash', approval_mode: true },
    });
    expect(child.status, show(child)).toBe(201);
    const transport = new StreamableHTTPClientTransport(new URL(`${stack.config.urls.mcp}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${d.api_key}` } },
    });
    const mcpClient = new Client({ name: 'attacker', version: '1.0.0' });
    await mcpClient.connect(transport);
    expect((await mcpClient.listTools()).tools.length).toBeGreaterThan(0);
    expect((await gwCall(d.api_key)).status).toBe(200);
    await smtp.waitForMail(address, { subject: /Verify/ });
    return {
      orgId: d.account.org_id,
      key: d.api_key,
      keyId: d.key_id,
      childKey: child.body.data.api_key,
      childKeyId: child.body.data.id,
      session: d.session_token,
      mcpClient,
    };
  }

  const gwCall = (key: string) => http(gw.url, 'GET', `/v1/proxy/${listing.slug}/free`, { token: key });

  async function keyRow(id: string) {
    const [row] = await sql<{ scopes: string[]; revoked_at: Date | null }>(
      stack.db.url,
      'select scopes, revoked_at from api_keys where id = $1',
      [id],
    );
    return row!;
  }

  /** Everything the attacker held is refused everywhere, and the key never gained the verified scopes. */
  async function expectAttackerLockedOut(a: Attacker) {
    for (const token of [a.key, a.childKey, a.session]) {
      expectFailure(await http(base, 'GET', '/v1/me', { token }), 401, 'unauthenticated');
    }
    expectFailure(await gwCall(a.key), 401, 'unauthenticated');
    expectFailure(await gwCall(a.childKey), 401, 'unauthenticated');
    await expect(a.mcpClient.listTools()).rejects.toThrow();
    for (const id of [a.keyId, a.childKeyId]) {
      const row = await keyRow(id);
      expect(row.revoked_at).toBeTruthy();
      expect(row.scopes).not.toContain('billing:write');
    }
    const [mcpRow] = await sql<{ ended: number }>(
      stack.db.url,
      `select count(*)::int as ended from mcp_sessions where org_id = $1 and end_reason = 'key_revoked'`,
      [a.orgId],
    );
    expect(mcpRow?.ended).toBe(1);
  }

  async function expectRevocationMail(address: string, a: Attacker) {
    const mail = await smtp.waitForMail(address, { subject: /revoked/ });
    expect(mail.text).toContain(`Organization: ${a.orgId}`);
    expect(mail.text).toContain(`${a.keyId} ("default")`);
    expect(mail.text).toContain(`${a.childKeyId} ("stash")`);
    expect(mail.text).toContain('API keys revoked (2)');
    expect(mail.text).toContain('Sessions ended: 1');
    expect(mail.text).toContain('Agent-tool (MCP) sessions ended: 1');
  }

  async function requestCode(address: string): Promise<string> {
    const before = smtp.messages.length;
    const res = await http(base, 'POST', '/v1/auth/login/request', { body: { email: address } });
    expect(res.status, show(res)).toBe(200);
    await expect
      .poll(() => smtp.messages.slice(before).find((m) => m.to.includes(address) && /sign-in code/.test(m.subject)))
      .toBeTruthy();
    return codeFromMail(
      smtp.messages.slice(before).find((m) => m.to.includes(address) && /sign-in code/.test(m.subject))!.text,
    );
  }

  it('a sign-in code revokes every credential made before the proof; the owner’s new session has the org', async () => {
    const address = victim('login');
    const a = await attackerSignsUp(address);
    const code = await requestCode(address);
    const res = await http(base, 'POST', '/v1/auth/login/verify', { body: { email: address, code } });
    expect(res.status, show(res)).toBe(200);
    expect(res.body.data).toMatchObject({ org_id: a.orgId, user: { email: address, email_verified: true } });

    await expectAttackerLockedOut(a);
    await expectRevocationMail(address, a);
    // The owner's own session was made after the proof: it works, with every scope, and the trial credit is theirs.
    const me = await http(base, 'GET', '/v1/me', { token: res.body.data.session_token });
    expect(me.status, show(me)).toBe(200);
    expect(me.body.data.scopes).toEqual(expect.arrayContaining(EXTRA));
    await expect
      .poll(
        async () => (await http(base, 'GET', '/v1/me', { token: res.body.data.session_token })).body.data.credit_cents,
      )
      .toBe(100);
    const keys = await http(base, 'GET', '/v1/keys', { token: res.body.data.session_token });
    expect((keys.body.data as { revoked_at: string | null }[]).every((k) => k.revoked_at)).toBe(true);
  });

  it('the code of an OAuth approval revokes every credential made before the proof; the agent’s key works', async () => {
    const address = victim('oauth');
    const a = await attackerSignsUp(address);
    const reg = await http(base, 'POST', '/oauth/register', {
      body: { client_name: 'Owner Agent', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' },
    });
    expect(reg.status, show(reg)).toBe(201);
    const verifier = randomBytes(32).toString('base64url');
    const q = new URLSearchParams({
      response_type: 'code',
      client_id: reg.body.client_id,
      redirect_uri: REDIRECT,
      state: 'st',
      resource: `${stack.config.urls.mcp}/mcp`,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    });
    const browser = new FormBrowser(base, REDIRECT);
    const start = await browser.follow(`${base}/oauth/authorize?${q.toString()}`);
    expect(start.status, start.text).toBe(200);
    const uidPath = /action="(\/oauth\/interaction\/[^"/]+)\/email"/.exec(start.text)?.[1];
    const sent = await browser.request('POST', `${uidPath}/email`, { csrf: csrfOf(start.text), email: address });
    expect(sent.status, sent.text).toBe(200);
    const code = codeFromMail((await smtp.waitForMail(address, { subject: /sign-in code/ })).text);
    const consent = await browser.request('POST', `${uidPath}/code`, { csrf: csrfOf(sent.text), email: address, code });
    expect(consent.status, consent.text).toBe(200);

    await expectAttackerLockedOut(a);
    await expectRevocationMail(address, a);

    const done = await browser.request('POST', `${uidPath}/consent`, {
      csrf: csrfOf(consent.text),
      decision: 'approve',
    });
    expect(done.status, done.text).toBe(303);
    const back = new URL((await browser.follow(done.location!)).location!);
    const token = await http<{ access_token: string }>(base, 'POST', '/oauth/token', {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      rawBody: new URLSearchParams({
        grant_type: 'authorization_code',
        code: back.searchParams.get('code')!,
        redirect_uri: REDIRECT,
        client_id: reg.body.client_id,
        code_verifier: verifier,
        resource: `${stack.config.urls.mcp}/mcp`,
      }).toString(),
    });
    expect(token.status, token.text).toBe(200);
    const { access_token } = token.body;
    const owner = new Client({ name: 'owner-agent', version: '1.0.0' });
    await owner.connect(
      new StreamableHTTPClientTransport(new URL(`${stack.config.urls.mcp}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${access_token}` } },
      }),
    );
    expect((await owner.listTools()).tools.length).toBeGreaterThan(0);
    await owner.close();
    const [minted] = await sql<{ org_id: string; scopes: string[] }>(
      stack.db.url,
      `select org_id, scopes from api_keys where name = 'OAuth: Owner Agent' and revoked_at is null and org_id = $1`,
      [a.orgId],
    );
    expect(minted?.scopes).toEqual(expect.arrayContaining(EXTRA));
  });

  it('the verification link: the mail and page say which org, made when and how, which key gains what; GET changes nothing', async () => {
    const address = victim('link');
    const res = await http(base, 'POST', '/v1/signup', { body: { email: address, name: 'Evil Org' } });
    expect(res.status, show(res)).toBe(201);
    const { key_id: keyId, api_key: key } = res.body.data;
    const orgId = res.body.data.account.org_id as string;
    const mail = await smtp.waitForMail(address, { subject: /Verify/ });
    const day = new Date().toISOString().slice(0, 10);
    for (const fact of [
      `Organization: ${orgId} ("Evil Org")`,
      `by a signup with this address (POST /v1/signup`,
      day,
      `Key that gains billing:write and provider:write: ${keyId} ("default")`,
      'do not click',
      `Sign in with a code instead (${base}/login)`,
    ]) {
      expect(mail.text).toContain(fact);
    }
    const token = tokenFromMail(mail.text);
    const browser = new FormBrowser(base, 'http://never.invalid');
    const page = await browser.request('GET', `/verify-email?token=${token}`);
    expect(page.status, page.text).toBe(200);
    for (const fact of [orgId, 'Evil Org', 'POST /v1/signup', day, keyId, 'billing:write and provider:write']) {
      expect(page.text).toContain(fact);
    }
    expect(page.text).toContain('do not click');
    // Opening the page (a mail scanner, a preview) changes nothing.
    expect((await keyRow(keyId)).scopes).not.toContain('billing:write');
    const [row] = await sql<{ used_at: Date | null }>(
      stack.db.url,
      'select used_at from email_verifications e join users u on u.id = e.user_id where u.email = $1',
      [address],
    );
    expect(row?.used_at).toBeNull();
    // The confirming click is a POST with the page's CSRF token; without it, 403.
    expect((await browser.request('POST', '/verify-email', { token })).status).toBe(403);
    const done = await browser.request('POST', '/verify-email', { csrf: csrfOf(page.text), token });
    expect(done.status, done.text).toBe(200);
    expect(done.text).toContain('is verified');
    const me = await http(base, 'GET', '/v1/me', { token: key });
    expect(me.body.data.scopes).toEqual(expect.arrayContaining(EXTRA));
    // Used: the page now says so and offers a sign-in instead.
    const again = await browser.request('GET', `/verify-email?token=${token}`);
    expect(again.status).toBe(400);
    expect(again.text).toContain('already been used');
  });

  it('the attach link of an anonymous org: the mail and page name the org, its registration and the key; GET changes nothing', async () => {
    const reg = await http(base, 'POST', '/v1/register');
    expect(reg.status, show(reg)).toBe(201);
    const { org_id: orgId, api_key: key } = reg.body.data;
    const me = await http(base, 'GET', '/v1/me', { token: key });
    const keyId = me.body.data.credential.key_id as string;
    const address = victim('attach');
    const res = await http(base, 'POST', '/v1/me/email', { token: key, body: { email: address } });
    expect(res.status, show(res)).toBe(200);
    const mail = await smtp.waitForMail(address, { subject: /Verify/ });
    for (const fact of [
      `Organization: ${orgId}`,
      "by an agent's anonymous registration (POST /v1/register)",
      new Date().toISOString().slice(0, 10),
      `Key that gains billing:write and provider:write: ${keyId}`,
      'do not click',
    ]) {
      expect(mail.text).toContain(fact);
    }
    const token = tokenFromMail(mail.text);
    const browser = new FormBrowser(base, 'http://never.invalid');
    const page = await browser.request('GET', `/verify-email?token=${token}`);
    expect(page.status, page.text).toBe(200);
    for (const fact of [orgId, 'anonymous registration', keyId, 'billing:write and provider:write']) {
      expect(page.text).toContain(fact);
    }
    expect((await keyRow(keyId)).scopes).not.toContain('billing:write');
    expect(await sql(stack.db.url, 'select id from users where email = $1', [address])).toEqual([]);
    const done = await browser.request('POST', '/verify-email', { csrf: csrfOf(page.text), token });
    expect(done.status, done.text).toBe(200);
    expect((await keyRow(keyId)).scopes).toEqual(expect.arrayContaining(EXTRA));
  });

  describe('unverified signups expire after 24 hours and free their email', () => {
    async function staleSignup(address: string) {
      const res = await http(base, 'POST', '/v1/signup', { body: { email: address } });
      expect(res.status, show(res)).toBe(201);
      await sql(stack.db.url, `update users set created_at = now() - interval '25 hours' where email = $1`, [address]);
      return res.body.data as { api_key: string; session_token: string; account: { org_id: string } };
    }

    async function expectAbandoned(old: { api_key: string; session_token: string }) {
      expectFailure(await http(base, 'GET', '/v1/me', { token: old.api_key }), 401, 'unauthenticated');
      expectFailure(await http(base, 'GET', '/v1/me', { token: old.session_token }), 401, 'unauthenticated');
      expectFailure(await gwCall(old.api_key), 401, 'unauthenticated');
    }

    it('a new signup takes the address and the stale org is abandoned; a younger one still blocks it', async () => {
      const young = victim('young');
      expect((await http(base, 'POST', '/v1/signup', { body: { email: young } })).status).toBe(201);
      expectFailure(await http(base, 'POST', '/v1/signup', { body: { email: young } }), 409, 'conflict');

      const address = victim('stale');
      const old = await staleSignup(address);
      const res = await http(base, 'POST', '/v1/signup', { body: { email: address } });
      expect(res.status, show(res)).toBe(201);
      expect(res.body.data.account.org_id).not.toBe(old.account.org_id);
      await expectAbandoned(old);
    });

    it('an anonymous org may attach the address of a stale signup', async () => {
      const address = victim('stale-attach');
      const old = await staleSignup(address);
      const reg = await http(base, 'POST', '/v1/register');
      const res = await http(base, 'POST', '/v1/me/email', { token: reg.body.data.api_key, body: { email: address } });
      expect(res.status, show(res)).toBe(200);
      await expectAbandoned(old);
    });

    it('a sign-in code never hands over the stale org', async () => {
      const address = victim('stale-login');
      const res = await http(base, 'POST', '/v1/signup', { body: { email: address } });
      const code = await requestCode(address);
      await sql(stack.db.url, `update users set created_at = now() - interval '25 hours' where email = $1`, [address]);
      const login = await http(base, 'POST', '/v1/auth/login/verify', { body: { email: address, code } });
      expectFailure(login, 401, 'unauthenticated');
      await expectAbandoned(res.body.data);
      const [row] = await sql<{ email_verified_at: Date | null }>(
        stack.db.url,
        'select email_verified_at from users where org_id = $1',
        [res.body.data.account.org_id],
      );
      expect(row?.email_verified_at).toBeNull();
      expect(await sql(stack.db.url, 'select id from users where email = $1', [address])).toEqual([]);
    });
  });
});
