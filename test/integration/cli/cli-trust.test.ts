// The CLI and untrusted servers (issue 21 item 8), as spawned processes against a real control plane and gateway on
// loopback: provider-controlled strings reach the terminal without escape sequences (`--json` stays the exact body),
// and a saved credential goes only to the origin that issued it: a second loopback server named by --base-url or
// --gateway-url receives no Authorization header, and the answer names the origin the credential belongs to.
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { createGatewayHandler, type GatewayHandler } from '../../../gateway/app.js';
import { createPerson } from '../../helpers/accounts.js';
import { sql } from '../../helpers/db.js';
import { startFullStack, type FullStack } from '../../helpers/full-stack.js';
import { serve } from '../../helpers/http.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';
import { runSvc, shownRun as shown, type SvcRun } from '../../helpers/svc-cli.js';
import { createPaidApi, closeAll } from '../../helpers/fixtures.js';

const HOSTILE_NAME = 'Evil \u001b]0;pwned\u0007Echo \u001b[2J\u001b[HAPI';
const HOSTILE_SUMMARY = 'Looks \u001b[31mred\u001b[0m \u009b2J and rings\u0007 a bell';
// eslint-disable-next-line no-control-regex -- the characters the CLI must never print
const ESC_OR_BEL = /[\u001b\u0007\u009b]/;

describe('svc CLI against untrusted servers', { timeout: 180_000 }, () => {
  let s: FullStack;
  let gateway: GatewayHandler;
  let gw: RunningHttpServer;
  let upstream: Upstream;
  /** Another origin on loopback: records what it is sent and answers like a server that wants a credential. */
  let other: Upstream;
  let home: string;
  let profiles = 0;

  beforeAll(async () => {
    s = await startFullStack({ schedules: false });
    gateway = createGatewayHandler(s.services);
    gw = await serve(gateway);
    upstream = await startUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ note: 'from upstream' }));
    });
    other = await startUpstream((_req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          ok: false,
          error: { code: 'unauthenticated', message: 'Send a bearer token.' },
          meta: { request_id: 'req_other' },
        }),
      );
    });
    const provider = await createPerson(s.services);
    const api = await createPaidApi(s.services, {
      provider: provider,
      baseUrl: upstream.url,
      slug: 'hostile-echo',
      endpoints: [{ method: 'GET', path: '/free', priceCents: 0 }],
    });
    await sql(s.db.url, `update apis set name = $1, summary = $2 where id = $3`, [
      HOSTILE_NAME,
      HOSTILE_SUMMARY,
      api.apiId,
    ]);
    await s.services.searchIndex.index([api.apiId]);
    await s.services.search.sync(true);
    home = mkdtempSync(path.join(tmpdir(), 'svc-trust-'));
  });
  afterAll(async () => {
    rmSync(home, { recursive: true, force: true });
    await closeAll(gw, gateway, upstream, other, s);
  });

  const newProfile = () => path.join(home, `profile-${++profiles}`, 'config.json');
  const svc = (args: string[], profile: string, env: Record<string, string> = {}): Promise<SvcRun> =>
    runSvc(args, { HOME: home, SVC_CONFIG: profile, SVC_BASE_URL: s.base, SVC_GATEWAY_URL: gw.url, ...env });

  async function registered(): Promise<{ profile: string; key: string }> {
    const profile = newProfile();
    const r = await svc(['register'], profile);
    expect(r.code, shown(r)).toBe(0);
    return { profile, key: (JSON.parse(readFileSync(profile, 'utf8')) as { api_key: string }).api_key };
  }

  it('prints provider-controlled names and summaries without escape sequences; --json stays exact', async () => {
    const { profile } = await registered();
    for (const args of [
      ['api', 'hostile-echo'],
      ['search', 'hostile', 'echo'],
      ['search', 'evil'],
    ]) {
      const r = await svc(args, profile);
      expect(r.code, shown(r)).toBe(0);
      expect(r.stdout, shown(r)).not.toMatch(ESC_OR_BEL);
      expect(r.stderr, shown(r)).not.toMatch(ESC_OR_BEL);
      expect(r.stdout).toContain('hostile-echo');
    }
    const detail = await svc(['api', 'hostile-echo'], profile);
    expect(detail.stdout).toContain('Evil Echo API');
    expect(detail.stdout).not.toContain('pwned');

    const json = await svc(['api', 'hostile-echo', '--json'], profile);
    expect(json.code, shown(json)).toBe(0);
    const printed = JSON.parse(json.stdout) as { data: { name: string; summary: string } };
    expect(printed.data).toMatchObject({ name: HOSTILE_NAME, summary: HOSTILE_SUMMARY });
  });

  it('an error message from the server is printed without escape sequences', async () => {
    const hostile = await startUpstream((_req, res) => {
      res.writeHead(502, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          ok: false,
          error: { code: 'upstream_error', message: 'bad \u001b]0;pwned\u0007 gateway \u001b[2J' },
          meta: { request_id: 'x' },
        }),
      );
    });
    try {
      const bad = await svc(['--base-url', hostile.url, 'categories'], newProfile());
      expect(bad.code, shown(bad)).toBe(1);
      expect(bad.stderr).toMatch(/^upstream_error: bad\s+gateway/);
      expect(bad.stderr).not.toMatch(ESC_OR_BEL);
      const asJson = await svc(['--json', '--base-url', hostile.url, 'categories'], newProfile());
      expect((JSON.parse(asJson.stdout) as { error: { message: string } }).error.message).toContain('\u001b]0;pwned');
    } finally {
      await hostile.close();
    }
  });

  it('a saved credential is not sent to another --base-url or --gateway-url; the answer names its origin', async () => {
    const { profile, key } = await registered();
    const saved = JSON.parse(readFileSync(profile, 'utf8')) as Record<string, string>;
    expect(saved).toMatchObject({
      credential_origin: new URL(s.base).origin,
      gateway_origin: new URL(gw.url).origin,
    });
    const before = other.seen.length;

    const me = await svc(['--base-url', other.url, 'me'], profile);
    expect(me.code, shown(me)).toBe(1);
    expect(me.stderr).toMatch(/^unauthenticated: /);
    expect(me.stderr).toContain(`belongs to ${new URL(s.base).origin}`);
    const call = await svc(['--gateway-url', other.url, 'call', 'hostile-echo', 'GET', '/free'], profile);
    expect(call.code, shown(call)).toBe(1);
    expect(call.stderr).toContain(`belongs to ${new URL(gw.url).origin}`);
    const env = await svc(['keys', 'list'], profile, { SVC_BASE_URL: other.url });
    expect(env.code, shown(env)).toBe(1);

    const sent = other.seen.slice(before);
    expect(sent.length).toBe(3);
    for (const req of sent) {
      expect(req.headers.authorization, `${req.method} ${req.url}`).toBeUndefined();
      expect(JSON.stringify(req.headers)).not.toContain(key);
    }

    // The origin that issued it still gets it; an explicit --key goes where the command goes.
    const atIssuer = await svc(['me'], profile);
    expect(atIssuer.code, shown(atIssuer)).toBe(0);
    const explicit = await svc(['--base-url', other.url, '--key', 'svc_live_given', 'me'], profile);
    expect(explicit.code).toBe(1);
    expect(other.seen.at(-1)!.headers.authorization).toBe('Bearer svc_live_given');
  });

  it('a profile saved before origins were stored is bound to the base URL it was saved with', async () => {
    const { key } = await registered();
    const profile = newProfile();
    mkdirSync(path.dirname(profile), { recursive: true, mode: 0o700 });
    writeFileSync(profile, JSON.stringify({ base_url: s.base, gateway_url: gw.url, api_key: key }), { mode: 0o600 });
    const before = other.seen.length;
    const elsewhere = await svc(['--base-url', other.url, 'me'], profile);
    expect(elsewhere.code, shown(elsewhere)).toBe(1);
    expect(other.seen.slice(before).map((r) => r.headers.authorization)).toEqual([undefined]);
    const at = await svc(['me'], profile);
    expect(at.code, shown(at)).toBe(0);

    // Logging out against another server does not hand it the saved session either.
    const session = newProfile();
    mkdirSync(path.dirname(session), { recursive: true, mode: 0o700 });
    writeFileSync(session, JSON.stringify({ base_url: s.base, session_token: 'sess_secret_value' }), { mode: 0o600 });
    const n = other.seen.length;
    const out = await svc(['--base-url', other.url, 'logout'], session);
    expect(out.code, shown(out)).toBe(0);
    expect(other.seen.length).toBe(n);
  });
});
