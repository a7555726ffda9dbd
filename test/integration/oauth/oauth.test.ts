// The OAuth 2.1 authorization server (issue 12): the MCP SDK client's own OAuth flow against the running control
// plane and agent-tool server, the person's step driven over HTTP (email, mailed code, consent with caps), and the
// refusals the MCP authorization spec asks for.
import { randomBytes } from 'node:crypto';
import { auth, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../../api/app.js';
import { createLogger } from '../../../core/logger.js';
import { createOAuthAdapter } from '../../../core/oauth/oauth-adapter.js';
import { startHttpServer, type RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { createMcpApp, type McpSurface } from '../../../mcp/app.js';
import { codeFromMail } from '../../helpers/full-stack.js';
import { sql } from '../../helpers/db.js';
import { http, serve, describe as show } from '../../helpers/http.js';
import { launchBrowser } from '../../helpers/browser.js';
import { csrfOf, FormBrowser } from '../../helpers/form-browser.js';
import { pkce } from '../../helpers/oauth-client.js';
import { freePort, waitFor } from '../../helpers/ports.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';
import { startSmtpCapture, type SmtpCapture } from '../../helpers/smtp.js';
import { postInitialize } from '../../helpers/mcp-eras.js';

const REDIRECT = 'http://127.0.0.1:47999/callback';

class TestClientProvider implements OAuthClientProvider {
  info?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = '';
  authorizationUrl?: URL;

  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Test Agent',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
    } as OAuthClientMetadata;
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

describe('OAuth 2.1 for agents', () => {
  let stack: TestStack;
  let smtp: SmtpCapture;
  let api: RunningHttpServer;
  let mcpServer: RunningHttpServer;
  let mcp: McpSurface;
  let issuer: string;
  let resource: string;
  let clientId: string;
  let emails = 0;

  beforeAll(async () => {
    smtp = await startSmtpCapture();
    const [apiPort, mcpPort] = [await freePort(), await freePort()];
    issuer = `http://127.0.0.1:${apiPort}`;
    stack = await createTestStack({
      env: { SMTP_URL: smtp.url, PUBLIC_BASE_URL: issuer, MCP_URL: `http://127.0.0.1:${mcpPort}` },
    });
    resource = `${stack.config.urls.mcp}/mcp`;
    api = await serve(createApiApp(stack.services).callback(), apiPort, 'api');
    mcp = createMcpApp(stack.services);
    mcpServer = await serve(mcp.app.callback(), mcpPort, 'mcp');
    const reg = await http(issuer, 'POST', '/oauth/register', {
      body: {
        client_name: 'Manual Agent',
        redirect_uris: [REDIRECT],
        token_endpoint_auth_method: 'none',
        application_type: 'native',
      },
    });
    expect(reg.status, show(reg)).toBe(201);
    clientId = reg.body.client_id;
  });
  afterAll(async () => {
    await mcp?.close();
    await mcpServer?.close();
    await api?.close();
    await stack?.close();
    await smtp?.close();
  });

  const newEmail = () => `person${++emails}-${randomBytes(3).toString('hex')}@example.com`;

  /** The person's step: email, mailed code, consent (approve with caps, or deny). Returns the client's redirect. */
  async function personApproves(
    authorizationUrl: string,
    email: string,
    decision: { approve: true; caps?: Record<string, string> } | { approve: false },
    browser = new FormBrowser(issuer, REDIRECT),
  ): Promise<URL> {
    const start = await browser.follow(authorizationUrl);
    expect(start.status, start.text).toBe(200);
    expect(start.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(start.text).not.toContain('<script');
    const uidPath = /action="(\/oauth\/interaction\/[^"/]+)\/email"/.exec(start.text)?.[1];
    expect(uidPath, start.text).toBeTruthy();
    // No CSRF token: refused.
    const forged = await browser.request('POST', `${uidPath}/email`, { email });
    expect(forged.status).toBe(403);
    const mailsBefore = smtp.messages.length;
    const sent = await browser.request('POST', `${uidPath}/email`, { csrf: csrfOf(start.text), email });
    expect(sent.status, sent.text).toBe(200);
    // This request's mail (an address may have signed in before).
    await smtp.waitForMail(email);
    const mail = await waitFor(
      () => Promise.resolve(smtp.messages.slice(mailsBefore).find((m) => m.to.includes(email.toLowerCase()))),
      { what: `a new mail to ${email}` },
    );
    const code = codeFromMail(mail.text);
    const consent = await browser.request('POST', `${uidPath}/code`, { csrf: csrfOf(sent.text), email, code });
    expect(consent.status, consent.text).toBe(200);
    expect(consent.text).toContain('127.0.0.1:47999'); // the redirect host is named
    expect(consent.headers.get('content-security-policy')).toContain("form-action 'self' http://127.0.0.1:47999");
    const form = decision.approve
      ? { csrf: csrfOf(consent.text), decision: 'approve', ...decision.caps }
      : { csrf: csrfOf(consent.text), decision: 'deny' };
    const done = await browser.request('POST', `${uidPath}/consent`, form);
    expect(done.status, done.text).toBe(303);
    const back = await browser.follow(done.location!);
    expect(back.status).toBe(303);
    expect(back.location).toMatch(new RegExp(`^${REDIRECT}`));
    return new URL(back.location!);
  }

  /** A new address through the email and code steps of a fresh authorize request, up to the consent page. */
  async function toConsentPage() {
    const browser = new FormBrowser(issuer, REDIRECT);
    const start = await browser.follow(
      authorizeUrl({ code_challenge: pkce().challenge, code_challenge_method: 'S256' }),
    );
    const uidPath = /action="(\/oauth\/interaction\/[^"/]+)\/email"/.exec(start.text)![1]!;
    const email = newEmail();
    const sent = await browser.request('POST', `${uidPath}/email`, { csrf: csrfOf(start.text), email });
    const code = codeFromMail((await smtp.waitForMail(email)).text);
    const consent = await browser.request('POST', `${uidPath}/code`, { csrf: csrfOf(sent.text), email, code });
    expect(consent.status, consent.text).toBe(200);
    return { browser, uidPath, email, sent, consent };
  }

  function authorizeUrl(params: Record<string, string | undefined>): string {
    const q = new URLSearchParams();
    const all: Record<string, string | undefined> = {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT,
      state: 'st',
      resource,
      ...params,
    };
    for (const [k, v] of Object.entries(all)) if (v !== undefined) q.set(k, v);
    return `${issuer}/oauth/authorize?${q.toString()}`;
  }

  async function tokenRequest(params: Record<string, string>) {
    const res = await http<Record<string, string>>(issuer, 'POST', '/oauth/token', {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      rawBody: new URLSearchParams(params).toString(),
    });
    return { status: res.status, headers: res.headers, body: res.body };
  }

  async function sessionFor(email: string): Promise<string> {
    smtp.messages.length = 0;
    await http(issuer, 'POST', '/v1/auth/login/request', { body: { email } });
    const code = codeFromMail((await smtp.waitForMail(email)).text);
    const res = await http(issuer, 'POST', '/v1/auth/login/verify', { body: { email, code } });
    expect(res.status, show(res)).toBe(200);
    return res.body.data.session_token;
  }

  async function mcpStatus(token: string): Promise<number> {
    return (await postInitialize(mcpServer.url, token)).status;
  }

  it('publishes RFC 8414 metadata (code flow, S256, CIMD, registration, iss) and protected-resource metadata', async () => {
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      const res = await http(issuer, 'GET', path);
      expect(res.status, show(res)).toBe(200);
      expect(res.body).toMatchObject({
        issuer,
        authorization_endpoint: `${issuer}/oauth/authorize`,
        token_endpoint: `${issuer}/oauth/token`,
        registration_endpoint: `${issuer}/oauth/register`,
        revocation_endpoint: `${issuer}/oauth/revoke`,
        response_types_supported: ['code'],
        code_challenge_methods_supported: ['S256'],
        client_id_metadata_document_supported: true,
        authorization_response_iss_parameter_supported: true,
      });
    }
    // The signing keys, as the metadata's jwks_uri names them (the document's JsonWebKeySet checks the shape).
    const jwks = await http(issuer, 'GET', '/oauth/jwks');
    expect(jwks.status, show(jwks)).toBe(200);
    expect(jwks.body.keys.length).toBeGreaterThan(0);
    // A browser-based client's preflight to the token endpoint.
    const preflight = await fetch(`${issuer}/oauth/token`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://inspector.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://inspector.example');
    // The request itself: allowed from the client's redirect origin only.
    for (const [origin, allowed] of [
      ['http://127.0.0.1:47999', 'http://127.0.0.1:47999'],
      ['https://evil.example', null],
    ] as const) {
      const res = await http(issuer, 'POST', '/oauth/token', {
        headers: { origin, 'content-type': 'application/x-www-form-urlencoded' },
        rawBody: new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token: 'x',
          client_id: clientId,
        }).toString(),
      });
      expect(res.headers.get('access-control-allow-origin'), origin).toBe(allowed);
    }
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const res = await http(mcpServer.url, 'GET', path);
      expect(res.body).toMatchObject({ resource, authorization_servers: [issuer] });
    }
  });

  it("completes the SDK client's own OAuth flow; the token acts as the minted key with the chosen caps", async () => {
    const client = new TestClientProvider();
    expect(await auth(client, { serverUrl: resource })).toBe('REDIRECT');
    const authUrl = client.authorizationUrl!;
    expect(authUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authUrl.searchParams.get('resource')).toBe(resource);
    expect(client.info?.client_id).toBeTruthy(); // registered dynamically

    const email = newEmail();
    const back = await personApproves(authUrl.href, email, {
      approve: true,
      caps: { budget: '25', daily_cap: '7.00', per_call_max: '0.30', approval_mode: 'on' },
    });
    expect(back.searchParams.get('iss')).toBe(issuer); // RFC 9207
    expect(await auth(client, { serverUrl: resource, authorizationCode: back.searchParams.get('code')! })).toBe(
      'AUTHORIZED',
    );
    const tokens = client.saved!;
    expect(tokens.access_token).toBeTruthy();
    expect(tokens.refresh_token).toBeTruthy();
    expect(tokens.expires_in).toBeLessThanOrEqual(3600);

    // The token calls a tool over the SDK's transport.
    const transport = new StreamableHTTPClientTransport(new URL(resource), { authProvider: client });
    const mcpClient = new Client({ name: 'oauth-agent', version: '1.0.0' });
    await mcpClient.connect(transport);
    const result = await mcpClient.callTool({ name: 'svc_register', arguments: {} });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ api_key: expect.stringMatching(/^svc_live_/) });
    const sessionId = transport.sessionId!;

    // The account was created on first use, its email verified by the code.
    const [user] = await sql<{ email_verified_at: Date | null; kind: string }>(
      stack.db.url,
      'select u.email_verified_at, o.kind from users u join orgs o on o.id = u.org_id where u.email = $1',
      [email],
    );
    expect(user?.email_verified_at).toBeTruthy();
    expect(user?.kind).toBe('standard');

    // The person sees the key, named after the client, with the caps they chose.
    const session = await sessionFor(email);
    const keys = await http(issuer, 'GET', '/v1/keys', { token: session });
    expect(keys.status, show(keys)).toBe(200);
    const minted = (keys.body.data as Record<string, unknown>[]).find((k) => k.name === 'OAuth: Test Agent');
    expect(minted, show(keys)).toMatchObject({
      budget_cents: 2500,
      daily_cap_cents: 700,
      per_call_max_cents: 30,
      approval_mode: true,
      scopes: expect.arrayContaining(['billing:write', 'provider:write', 'proxy:call']),
    });

    // A refresh rotates the refresh token; reusing the old one revokes the whole grant.
    const first = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token!,
      client_id: client.info!.client_id,
    });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.headers.get('cache-control')).toBe('no-store');
    expect(first.body.refresh_token).not.toBe(tokens.refresh_token);
    expect(await mcpStatus(first.body.access_token!)).toBe(200);
    // The session belongs to the minted key: the refreshed token (same key) continues it; another key cannot.
    const inSession = (token: string) =>
      http(mcpServer.url, 'POST', '/mcp', {
        token,
        headers: {
          accept: 'application/json, text/event-stream',
          'mcp-session-id': sessionId,
          'mcp-protocol-version': '2025-11-25',
        },
        body: { jsonrpc: '2.0', id: 7, method: 'tools/list' },
      });
    const continued = await inSession(first.body.access_token!);
    expect(continued.status, show(continued)).toBe(200);
    expect(continued.text).toContain('svc_register');
    const stranger = (await stack.services.accounts.register({ ip: '10.9.9.9' })).api_key;
    expect((await inSession(stranger)).status).toBe(404);
    await transport.terminateSession();
    await mcpClient.close();
    const reused = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token!,
      client_id: client.info!.client_id,
    });
    expect(reused.status).toBe(400);
    expect(reused.body.error).toBe('invalid_grant');
    expect(await mcpStatus(first.body.access_token!)).toBe(401);
    const after = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: first.body.refresh_token!,
      client_id: client.info!.client_id,
    });
    expect(after.body.error).toBe('invalid_grant');

    // Revoking the key in GET /v1/keys ends the tokens of a later grant too.
    const again = await approveAndExchange(newEmail());
    expect(await mcpStatus(again.access_token)).toBe(200);
    const person = await sessionFor(again.email);
    const list = await http(issuer, 'GET', '/v1/keys', { token: person });
    const keyId = (list.body.data as { id: string; name: string }[]).find((k) => k.name === 'OAuth: Manual Agent')!.id;
    expect((await http(issuer, 'DELETE', `/v1/keys/${keyId}`, { token: person })).status).toBe(200);
    expect(await mcpStatus(again.access_token)).toBe(401);
    const refreshed = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: again.refresh_token,
      client_id: clientId,
    });
    expect(refreshed.body.error).toBe('invalid_grant');
  });

  async function approveAndExchange(email: string, scope?: string, browser?: FormBrowser) {
    const { verifier, challenge } = pkce();
    const back = await personApproves(
      authorizeUrl({ code_challenge: challenge, code_challenge_method: 'S256', scope }),
      email,
      { approve: true },
      browser,
    );
    expect(back.searchParams.get('error'), back.toString()).toBeNull();
    const res = await tokenRequest({
      grant_type: 'authorization_code',
      code: back.searchParams.get('code')!,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
      client_id: clientId,
      resource,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return { access_token: res.body.access_token!, refresh_token: res.body.refresh_token!, email };
  }

  it('one browser approves any number of clients in a row, each time a code reaches the client (issue 22)', async () => {
    const browser = new FormBrowser(issuer, REDIRECT);
    const first = newEmail();
    for (const email of [first, first, newEmail()]) {
      const { access_token } = await approveAndExchange(email, undefined, browser);
      expect(await mcpStatus(access_token)).toBe(200);
    }
  });

  it('a token whose client asked scope=catalog:read acts with that scope only (issue 21 item 4)', async () => {
    const { access_token } = await approveAndExchange(newEmail(), 'catalog:read offline_access');
    const transport = new StreamableHTTPClientTransport(new URL(resource), {
      requestInit: { headers: { Authorization: `Bearer ${access_token}` } },
    });
    const client = new Client({ name: 'narrow-agent', version: '1.0.0' });
    await client.connect(transport);
    try {
      const categories = await client.callTool({ name: 'get_categories', arguments: {} });
      expect(categories.isError, JSON.stringify(categories.content)).toBeFalsy();
      // The key the person minted holds every scope; the token acts with what it was granted only, through the
      // gateway too (call_api and run_probe: the spec's 403 forbidden, naming proxy:call).
      const call = { slug: 'any-api', endpoint: '/anything' };
      for (const [name, scope, args] of [
        ['get_my_profile', 'provider:write', {}],
        ['get_usage', 'usage:read', {}],
        ['call_api', 'proxy:call', call],
        ['run_probe', 'proxy:call', call],
        ['set_budget', 'keys:write', { daily_cap_cents: 1 }],
        ['create_checkout', 'billing:write', { pack: 'starter' }],
      ] as const) {
        const refused = await client.callTool({ name, arguments: args });
        expect(refused.isError, name).toBe(true);
        const error = (refused.structuredContent as { error: { code: string; details?: Record<string, unknown> } })
          .error;
        expect(error.code, name).toBe('forbidden');
        expect(JSON.stringify(error.details), name).toContain(scope);
      }
      const access = await client.callTool({ name: 'provision_access', arguments: {} });
      expect((access.structuredContent as { missing_scopes: string[] }).missing_scopes).toEqual(
        expect.arrayContaining(['proxy:call', 'keys:write', 'usage:read', 'billing:write', 'provider:write']),
      );
    } finally {
      await client.close();
    }
    // The grant itself holds only what was asked.
    const [grant] = await sql<{ payload: { resources?: Record<string, string> } }>(
      stack.db.url,
      `select payload from oauth_payloads where model = 'Grant' order by expires_at desc limit 1`,
    );
    expect(grant?.payload.resources?.[resource]).toBe('catalog:read');
  });

  it('two concurrent refreshes with one refresh token: exactly one succeeds, the family is revoked (item 6)', async () => {
    const first = await approveAndExchange(newEmail());
    expect(await mcpStatus(first.access_token)).toBe(200);
    const refresh = () =>
      tokenRequest({ grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: clientId });
    const results = await Promise.all([refresh(), refresh(), refresh()]);
    const won = results.filter((r) => r.status === 200);
    const lost = results.filter((r) => r.status !== 200);
    expect(won, JSON.stringify(results.map((r) => r.body))).toHaveLength(1);
    for (const r of lost) expect(r.body.error).toBe('invalid_grant');
    // The lost race is reuse: the whole grant is gone, the winner's tokens with it.
    expect(await mcpStatus(first.access_token)).toBe(401);
    expect(await mcpStatus(won[0]!.body.access_token!)).toBe(401);
    const next = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: won[0]!.body.refresh_token!,
      client_id: clientId,
    });
    expect(next.body.error).toBe('invalid_grant');
  });

  it('refuses an authorization request without PKCE, with plain, without or with another resource', async () => {
    const cases: [Record<string, string | undefined>, string][] = [
      [{}, 'invalid_request'],
      [{ code_challenge: 'x'.repeat(43), code_challenge_method: 'plain' }, 'invalid_request'],
      [{ code_challenge: pkce().challenge, code_challenge_method: 'S256', resource: undefined }, 'invalid_target'],
      [
        { code_challenge: pkce().challenge, code_challenge_method: 'S256', resource: 'https://other.example/mcp' },
        'invalid_target',
      ],
    ];
    for (const [params, error] of cases) {
      const res = await fetch(authorizeUrl(params), { redirect: 'manual' });
      expect(res.status, JSON.stringify(params)).toBe(303);
      const location = new URL(res.headers.get('location')!);
      expect(location.href.startsWith(REDIRECT), location.href).toBe(true);
      expect(location.searchParams.get('error'), JSON.stringify(params)).toBe(error);
      expect(location.searchParams.get('iss')).toBe(issuer);
    }
  });

  it('never redirects to a redirect URI that is not registered exactly', async () => {
    for (const redirect of [`${REDIRECT}/more`, 'http://127.0.0.1:47999/callback?x=1', 'https://evil.example/cb']) {
      const res = await fetch(authorizeUrl({ redirect_uri: redirect, code_challenge: pkce().challenge }), {
        redirect: 'manual',
      });
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(await res.text()).toContain('redirect_uri');
    }
  });

  it('refuses a wrong verifier, a wrong resource and a reused code at the token endpoint', async () => {
    async function codeFor() {
      const { verifier, challenge } = pkce();
      const back = await personApproves(
        authorizeUrl({ code_challenge: challenge, code_challenge_method: 'S256' }),
        newEmail(),
        { approve: true },
      );
      const code = back.searchParams.get('code')!;
      return (extra: Record<string, string>) =>
        tokenRequest({
          grant_type: 'authorization_code',
          code,
          redirect_uri: REDIRECT,
          client_id: clientId,
          code_verifier: verifier,
          resource,
          ...extra,
        });
    }
    // Each refusal uses the code up (the library consumes a code on any exchange attempt).
    const wrongVerifier = await (await codeFor())({ code_verifier: pkce().verifier });
    expect(wrongVerifier.status).toBe(400);
    expect(wrongVerifier.body.error).toBe('invalid_grant');
    const wrongResource = await (await codeFor())({ resource: 'https://other.example/mcp' });
    expect(wrongResource.body.error).toBe('invalid_target');

    const exchange = await codeFor();
    const ok = await exchange({});
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.headers.get('cache-control')).toBe('no-store');
    expect(ok.body.token_type).toBe('Bearer');
    expect(await mcpStatus(ok.body.access_token!)).toBe(200);
    const reused = await exchange({});
    expect(reused.body.error).toBe('invalid_grant');
    // Reusing the code revokes what it issued.
    expect(await mcpStatus(ok.body.access_token!)).toBe(401);
  });

  it('fetches a Client ID Metadata Document through the SSRF guard, and refuses one it cannot fetch', async () => {
    const res = await fetch(
      authorizeUrl({
        client_id: 'https://cimd.invalid/agent.json',
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
      }),
      { redirect: 'manual' },
    );
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    expect(await res.text()).toContain('invalid_client');
    // The SSRF guard's own refusal (its DNS step), not the library's fetch.
    expect(stack.logs.text()).toContain('Host cimd.invalid could not be resolved.');
  });

  it('a client known only by its Client ID Metadata Document: the whole code flow, iss in the answer, the token on /mcp', async () => {
    // The document is served on loopback over http; the client_id says https (the library takes only https ids), and
    // with UPSTREAM_ALLOW_PRIVATE (tests, development) a loopback document is fetched over plain http.
    const documents = new Map<string, Record<string, unknown>>();
    const fetched: string[] = [];
    const host = await serve((req, res) => {
      fetched.push(req.url ?? '');
      const doc = documents.get(req.url ?? '');
      res.writeHead(doc ? 200 : 404, { 'content-type': 'application/json', 'cache-control': 'max-age=300' });
      res.end(JSON.stringify(doc ?? {}));
    });
    try {
      const base = host.url.replace(/^http:/, 'https:');
      const id = (path: string) => `${base}${path}`;
      const document = (path: string, extra: Record<string, unknown> = {}) =>
        documents.set(path, {
          client_id: id(path),
          client_name: 'Metadata Agent',
          redirect_uris: [REDIRECT],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: 'none',
          application_type: 'native',
          ...extra,
        });
      document('/agent.json');

      // The pages say who chose the client's name: the host that published the document.
      const page = await new FormBrowser(issuer, REDIRECT).follow(
        authorizeUrl({ client_id: id('/agent.json'), code_challenge: pkce().challenge, code_challenge_method: 'S256' }),
      );
      expect(page.text).toContain(
        `<strong>Metadata Agent</strong> (the name published at <strong>${new URL(base).host}</strong>)`,
      );

      // The SDK's own client, given a metadata URL: the server advertises metadata documents, so it uses the URL as
      // its client_id and registers nothing.
      class MetadataClient extends TestClientProvider {
        get clientMetadataUrl() {
          return id('/agent.json');
        }
      }
      const clientRows = async () =>
        Number(
          (
            await sql<{ n: string }>(stack.db.url, `select count(*) as n from oauth_payloads where model = 'Client'`)
          )[0]!.n,
        );
      const clientsBefore = await clientRows();
      const client = new MetadataClient();
      expect(await auth(client, { serverUrl: resource })).toBe('REDIRECT');
      const authUrl = client.authorizationUrl!;
      expect(authUrl.searchParams.get('client_id')).toBe(id('/agent.json'));
      expect(client.info?.client_id).toBe(id('/agent.json'));
      const back = await personApproves(authUrl.href, newEmail(), { approve: true });
      // RFC 9207: the authorization response names the issuer.
      expect(back.searchParams.get('iss')).toBe(issuer);
      expect(await auth(client, { serverUrl: resource, authorizationCode: back.searchParams.get('code')! })).toBe(
        'AUTHORIZED',
      );
      const transport = new StreamableHTTPClientTransport(new URL(resource), { authProvider: client });
      const agent = new Client({ name: 'metadata-agent', version: '1.0.0' });
      await agent.connect(transport);
      try {
        const categories = await agent.callTool({ name: 'get_categories', arguments: {} });
        expect(categories.isError, JSON.stringify(categories.content)).toBeFalsy();
      } finally {
        await agent.close();
      }
      // Fetched, then cached: the pages and the token request did not fetch it again. Nothing was registered.
      expect(fetched.filter((u) => u === '/agent.json')).toHaveLength(1);
      expect(await clientRows()).toBe(clientsBefore);

      // Refused: a document naming another client_id, and a web client's plain-http redirect off loopback.
      document('/other.json', { client_id: id('/someone-else.json') });
      document('/web.json', { application_type: 'web', redirect_uris: ['http://agent.example/callback'] });
      for (const [path, detail] of [
        ['/other.json', 'client_id does not match'],
        ['/web.json', 'must use https'],
      ] as const) {
        const res = await fetch(authorizeUrl({ client_id: id(path), code_challenge: pkce().challenge }), {
          redirect: 'manual',
        });
        expect(res.status, path).toBe(400);
        expect(res.headers.get('location'), path).toBeNull();
        const text = await res.text();
        expect(text, path).toContain('invalid_');
        expect(text, path).toContain(detail);
      }
    } finally {
      await host.close();
    }
  });

  it('honours application_type at registration: web redirects are https or loopback, native may use its own scheme', async () => {
    const register = (application_type: string | undefined, redirect: string) =>
      http(issuer, 'POST', '/oauth/register', {
        body: {
          client_name: 'Typed Agent',
          redirect_uris: [redirect],
          token_endpoint_auth_method: 'none',
          ...(application_type ? { application_type } : {}),
        },
      });
    for (const [type, redirect, status] of [
      [undefined, 'http://agent.example/callback', 400], // web by default
      ['web', 'http://agent.example/callback', 400],
      ['web', 'https://agent.example/callback', 201],
      ['web', 'http://localhost:8123/callback', 201],
      ['web', 'com.example.agent:/callback', 400],
      ['native', 'com.example.agent:/callback', 201],
      ['native', 'http://127.0.0.1/callback', 201],
      ['native', 'http://agent.example/callback', 400],
      ['native', 'https://127.0.0.1/callback', 400],
    ] as const) {
      const res = await register(type, redirect);
      expect(res.status, `${type} ${redirect}: ${show(res)}`).toBe(status);
      if (status === 400) expect(res.body.error, redirect).toBe('invalid_redirect_uri');
      else expect(res.body.application_type).toBe(type ?? 'web');
    }
    // A native app's private-use scheme: the authorize pages let the consent form's redirect go there (CSP
    // form-action names the scheme; an opaque origin could not be named).
    const app = (await register('native', 'com.example.agent:/callback')).body.client_id as string;
    const page = await new FormBrowser(issuer, 'com.example.agent:').follow(
      authorizeUrl({
        client_id: app,
        redirect_uri: 'com.example.agent:/callback',
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
      }),
    );
    expect(page.status, page.text).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("form-action 'self' com.example.agent:");
    // A native client's loopback redirect may come back on any port (RFC 8252 7.3); a web client's may not.
    const native = (await register('native', 'http://127.0.0.1/callback')).body.client_id as string;
    const web = (await register('web', 'http://127.0.0.1:47999/callback')).body.client_id as string;
    for (const [client, ok] of [
      [native, true],
      [web, false],
    ] as const) {
      const res = await fetch(
        authorizeUrl({
          client_id: client,
          redirect_uri: 'http://127.0.0.1:51234/callback',
          code_challenge: pkce().challenge,
          code_challenge_method: 'S256',
        }),
        { redirect: 'manual' },
      );
      expect(res.status, client).toBe(ok ? 303 : 400);
    }
  });

  it('the pages work in a browser without JavaScript, under their CSP, back to the client', async () => {
    const callbacks: string[] = [];
    const receiver = await startHttpServer({
      name: 'client',
      host: '127.0.0.1',
      port: 0,
      handler: (req, res) => {
        callbacks.push(req.url ?? '');
        res.end('ok');
      },
      logger: createLogger({ level: 'silent' }),
      graceMs: 500,
    });
    const redirect = `${receiver.url}/cb`;
    const reg = await http(issuer, 'POST', '/oauth/register', {
      body: {
        client_name: 'Browser Agent',
        redirect_uris: [redirect],
        token_endpoint_auth_method: 'none',
        application_type: 'native',
      },
    });
    const browser = await launchBrowser();
    try {
      const context = await browser.newContext({ javaScriptEnabled: false });
      const page = await context.newPage();
      const violations: string[] = [];
      page.on('console', (m) => {
        if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
      });
      const email = newEmail();
      await page.goto(
        authorizeUrl({
          client_id: reg.body.client_id,
          redirect_uri: redirect,
          code_challenge: pkce().challenge,
          code_challenge_method: 'S256',
        }),
      );
      expect(await page.textContent('body')).toContain('Browser Agent');
      await page.fill('#email', email);
      await page.click('text=Email me a code');
      await page.fill('#code', codeFromMail((await smtp.waitForMail(email)).text));
      await page.click('text=Continue');
      await page.fill('#consent-budget', '12.34');
      await page.click('button[value=approve]');
      await waitFor(() => Promise.resolve(callbacks.length > 0), { what: 'the redirect to the client' });
      const back = new URL(callbacks[0]!, receiver.url);
      expect(back.searchParams.get('code')).toBeTruthy();
      expect(back.searchParams.get('iss')).toBe(issuer);
      expect(violations).toEqual([]);
    } finally {
      await browser.close();
      await receiver.close();
    }
  });

  it('"Not you?" on the code and consent pages leads back to the email step, which forgets the proven address', async () => {
    const { browser, uidPath, email, sent, consent } = await toConsentPage();
    expect(sent.text).toContain(`<a href="${uidPath}">Use another email or get a new code</a>`);
    expect(consent.text).toContain(`<a href="${uidPath}">Not you? Use another email than ${email}</a>`);

    const back = await browser.request('GET', uidPath);
    expect(back.status, back.text).toBe(200);
    expect(back.text).toContain('Email me a code');
    // The consent form shown before no longer approves: the address is proven again first, and no key is minted.
    const stale = await browser.request('POST', `${uidPath}/consent`, {
      csrf: csrfOf(consent.text),
      decision: 'approve',
    });
    expect(stale.status, stale.text).toBe(400);
    expect(stale.text).toContain('Prove your email address first.');
    const keys = await sql(
      stack.db.url,
      `select 1 from api_keys k join users u on u.org_id = k.org_id where u.email = $1 and k.name like 'OAuth:%'`,
      [email],
    );
    expect(keys).toHaveLength(0);
  });

  it('consent caps are dollars (a bad amount shows the form again); the old cent-valued names are still read', async () => {
    const { browser, uidPath, email, consent } = await toConsentPage();
    // The proposed caps, in dollars, in the fieldset the console's key forms use.
    expect(consent.text).toContain('<label for="consent-budget">Budget (USD)</label>');
    expect(consent.text).toMatch(/id="consent-budget" name="budget"[^>]* value="10\.00"/);
    expect(consent.text).toMatch(/id="consent-daily_cap" name="daily_cap"[^>]* value="5\.00"/);
    expect(consent.text).toMatch(/id="consent-per_call_max" name="per_call_max"[^>]* value="1\.00"/);
    expect(consent.text).not.toContain('cents');

    const post = (fields: Record<string, string>) =>
      browser.request('POST', `${uidPath}/consent`, { csrf: csrfOf(consent.text), decision: 'approve', ...fields });
    const negative = await post({ budget: '-5', daily_cap: '', per_call_max: '' });
    expect(negative.status, negative.text).toBe(400);
    expect(negative.text).toContain('Budget: cannot be negative');
    expect(negative.text).toContain('name="decision" value="approve"'); // the form again, to correct
    const decimals = await post({ budget: '1', daily_cap: '0.125', per_call_max: '' });
    expect(decimals.status, decimals.text).toBe(400);
    expect(decimals.text).toContain('Daily cap: at most 2 decimals');
    const text = await post({ budget: 'ten', daily_cap: '', per_call_max: '' });
    expect(text.status, text.text).toBe(400);
    expect(text.text).toContain('Budget: enter an amount in dollars');

    // An outside client posting the old names (whole cents) still approves, with those caps.
    const legacy = await post({ budget_cents: '1500', daily_cap_cents: '400', per_call_max_cents: '25' });
    expect(legacy.status, legacy.text).toBe(303);
    const keys = await sql<{ budget_cents: string; daily_cap_cents: string; per_call_max_cents: string }>(
      stack.db.url,
      `select k.budget_cents, k.daily_cap_cents, k.per_call_max_cents from api_keys k
         join users u on u.org_id = k.org_id where u.email = $1 and k.name like 'OAuth:%'`,
      [email],
    );
    expect(keys).toEqual([{ budget_cents: '1500', daily_cap_cents: '400', per_call_max_cents: '25' }]);
  });

  it('sends access_denied to the client when the person denies', async () => {
    const back = await personApproves(
      authorizeUrl({ code_challenge: pkce().challenge, code_challenge_method: 'S256' }),
      newEmail(),
      { approve: false },
    );
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('code')).toBeNull();
    expect(back.searchParams.get('iss')).toBe(issuer);
  });

  it('refuses at /mcp a token for another audience, and a revoked token; stores tokens only as hashes', async () => {
    const { access_token, refresh_token } = await approveAndExchange(newEmail());
    const stored = await stack.services.orm.em
      .fork()
      .execute<{ id: string; payload: unknown }[]>('select id, payload from oauth_payloads');
    const dump = JSON.stringify(stored);
    expect(dump).not.toContain(access_token);
    expect(dump).not.toContain(refresh_token);

    // A live token of our server, but issued for another resource.
    const Adapter = createOAuthAdapter(stack.services.orm);
    const other = randomBytes(32).toString('base64url');
    const keyRow = await stack.services.orm.em
      .fork()
      .execute<{ id: string }[]>("select id from api_keys where source = 'oauth' and revoked_at is null limit 1");
    const now = Math.floor(Date.now() / 1000);
    await new Adapter('AccessToken').upsert(
      other,
      {
        jti: other,
        kind: 'AccessToken',
        accountId: keyRow[0]!.id,
        clientId,
        grantId: 'grant-other',
        aud: 'https://other.example/mcp',
        iat: now,
        exp: now + 600,
      },
      600,
    );
    expect(await mcpStatus(other)).toBe(401);

    // Rows expired for more than a day are purged after a write (a fresh adapter purges on its first write).
    const expired = randomBytes(32).toString('base64url');
    await new (createOAuthAdapter(stack.services.orm))('AccessToken').upsert(
      expired,
      { jti: expired, kind: 'AccessToken', accountId: 'k', clientId, grantId: 'g-old', iat: now, exp: now },
      -2 * 86_400,
    );
    const left = await sql(stack.db.url, "select 1 from oauth_payloads where grant_id in ('g-old', 'grant-other')");
    expect(left).toHaveLength(1); // the live one stays
    const res = await http(mcpServer.url, 'POST', '/mcp', { token: other, body: {} });
    expect(res.headers.get('www-authenticate')).toMatch(/resource_metadata="[^"]+", scope="[^"]+"/);

    // RFC 7009 revocation.
    expect(await mcpStatus(access_token)).toBe(200);
    const revoke = await http(issuer, 'POST', '/oauth/revoke', {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      rawBody: new URLSearchParams({ token: access_token, client_id: clientId }).toString(),
    });
    expect(revoke.status).toBe(200);
    expect(await mcpStatus(access_token)).toBe(401);
  });
});
