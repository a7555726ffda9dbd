// The official MCP conformance runner (@modelcontextprotocol/conformance, on Node 22 from .tools/conformance/):
// - `server --requirements 2025-11-25` and `server --requirements 2026-07-28` against our agent-tool server (both
//   revisions at the one /mcp URL; each run is at its revision's wire: the stateful handshake, then the stateless
//   per-request `_meta`). Scenarios that need the reference server's own test tools, prompts and resources (or a
//   feature we deliberately do not offer) are listed per revision, each with its reason, in
//   test/fixtures/mcp-conformance-expected-failures.json; any other failure fails the test, and so does an expected
//   failure that starts passing, so the list stays true.
// - `authorization` against our OAuth authorization server: its metadata scenario, and its code-grant scenario with
//   the person's step (email, mailed code, consent with caps) driven by this test at the URL the runner prints.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../../api/app.js';
import { OAUTH_PATHS } from '../../../core/oauth/oauth-provider.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { createMcpApp, type McpSurface } from '../../../mcp/app.js';
import {
  conformanceMissing,
  failuresOf,
  readResults,
  requiredServerScenarios,
  runConformance,
  startAuthProxy,
  type AuthProxy,
  type ScenarioResult,
} from '../../helpers/conformance.js';
import { sql } from '../../helpers/db.js';
import { ROOT } from '../../helpers/env.js';
import { csrfOf, FormBrowser } from '../../helpers/form-browser.js';
import { codeFromMail } from '../../helpers/full-stack.js';
import { describe as show, http, serve } from '../../helpers/http.js';
import { freePort } from '../../helpers/ports.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';
import { startSmtpCapture, type SmtpCapture } from '../../helpers/smtp.js';
import { closeAll } from '../../helpers/fixtures.js';

/** The revisions whose server requirements we meet (the runner takes one revision per run). */
const REVISIONS = ['2025-11-25', '2026-07-28'] as const;
/** The revision the authorization scenarios run at. */
const SPEC = '2025-11-25';
const EXPECTED_FAILURES = path.join(ROOT, 'test', 'fixtures', 'mcp-conformance-expected-failures.json');
/** The runner's own per-scenario bound, and ours for a whole run (the server suite is 33 scenarios, ~5 s here). */
const SCENARIO_TIMEOUT_MS = 15_000;
const SERVER_RUN_TIMEOUT_MS = 180_000;
const AUTHORIZATION_RUN_TIMEOUT_MS = 60_000;
const CLIENT_NAME = 'MCP conformance runner';

interface ExpectedFailure {
  scenario: string;
  reason: string;
}

const missing = conformanceMissing();
if (missing) {
  console.warn(
    `Skipping the MCP conformance tests: ${missing}. Run bash scripts/ensure-conformance.sh (npm test does).`,
  );
}

const summaryOf = (results: Map<string, ScenarioResult>) =>
  [...results.values()]
    .map((r) => `${r.passed ? 'pass' : 'FAIL'} ${r.scenario}${r.passed ? '' : ` (${failuresOf(r)})`}`)
    .join('\n');

describe.skipIf(missing !== undefined)('MCP conformance runner', () => {
  let smtp: SmtpCapture;
  let stack: TestStack;
  let mcp: McpSurface;
  let mcpServer: RunningHttpServer;
  let api: RunningHttpServer;
  let proxy: AuthProxy;
  let issuer: string;
  let outputDir: string;
  let apiKey = '';

  beforeAll(async () => {
    smtp = await startSmtpCapture();
    // The runner reaches the agent-tool server through the proxy, which adds the key; the proxy's address is the
    // server's public URL (MCP_URL), as behind any reverse proxy.
    proxy = await startAuthProxy(() => apiKey);
    const apiPort = await freePort();
    issuer = `http://127.0.0.1:${apiPort}`;
    stack = await createTestStack({ env: { SMTP_URL: smtp.url, PUBLIC_BASE_URL: issuer, MCP_URL: proxy.url } });
    api = await serve(createApiApp(stack.services).callback(), apiPort, 'api');
    mcp = createMcpApp(stack.services);
    mcpServer = await serve(mcp.app.callback());
    proxy.target = mcpServer.url;
    const registered = await http(issuer, 'POST', '/v1/register');
    expect(registered.status, show(registered)).toBe(201);
    apiKey = registered.body.data.api_key;
    outputDir = await mkdtemp(path.join(tmpdir(), 'mcp-conformance-'));
  });
  afterAll(async () => {
    await closeAll(mcp, mcpServer, proxy, api, stack, smtp);
    if (outputDir) await rm(outputDir, { recursive: true, force: true });
  });

  for (const revision of REVISIONS) {
    it(
      `server requirements ${revision}: every scenario passes but those needing the reference server's own tools, prompts and resources`,
      async () => {
        const fixture = JSON.parse(await readFile(EXPECTED_FAILURES, 'utf8')) as {
          server: Record<string, ExpectedFailure[]>;
        };
        const expected = { server: fixture.server[revision] ?? [] };
        // Each entry names a scenario once and says why it fails.
        expect(new Set(expected.server.map((e) => e.scenario)).size).toBe(expected.server.length);
        for (const e of expected.server) expect(e.reason.length, e.scenario).toBeGreaterThan(20);
        const dir = path.join(outputDir, `server-${revision}`);
        const run = await runConformance(
          [
            'server',
            '--url',
            `${proxy.url}/mcp`,
            '--requirements',
            revision,
            '--timeout',
            String(SCENARIO_TIMEOUT_MS),
            '--output-dir',
            dir,
          ],
          { timeoutMs: SERVER_RUN_TIMEOUT_MS },
        );
        expect(run.timedOut, `the runner took over ${SERVER_RUN_TIMEOUT_MS} ms:\n${run.output.slice(-4_000)}`).toBe(
          false,
        );
        const results = await readResults(dir, 'server');
        // Every scenario the revision requires ran (the runner also runs a few it does not score; they count here too).
        const required = await requiredServerScenarios(revision);
        expect(required.length).toBeGreaterThanOrEqual(30);
        expect(
          required.filter((s) => !results.has(s)),
          `required scenarios without results:\n${run.output.slice(-4_000)}`,
        ).toEqual([]);

        const expectedIds = new Set(expected.server.map((e) => e.scenario));
        const unexpected = [...results.values()].filter((r) => !r.passed && !expectedIds.has(r.scenario));
        expect(
          unexpected.map((r) => `${r.scenario}: ${failuresOf(r)}`),
          `failing scenarios that are not in the expected-failures file; all results:\n${summaryOf(results)}`,
        ).toEqual([]);
        expect(
          expected.server.filter((e) => results.get(e.scenario)?.passed).map((e) => e.scenario),
          'expected failures that now pass: remove them from the expected-failures file',
        ).toEqual([]);
        expect(
          expected.server.filter((e) => !results.has(e.scenario)).map((e) => e.scenario),
          'expected failures the runner no longer runs: remove them from the expected-failures file',
        ).toEqual([]);
      },
      SERVER_RUN_TIMEOUT_MS + 30_000,
    );
  }

  it(
    'authorization: our OAuth server passes the metadata and code-grant scenarios (the person approves with caps)',
    async () => {
      const callbackPort = await freePort();
      const callback = `http://127.0.0.1:${callbackPort}/callback`;
      const reg = await http(issuer, 'POST', OAUTH_PATHS.registration, {
        body: {
          client_name: CLIENT_NAME,
          redirect_uris: [callback],
          token_endpoint_auth_method: 'none',
          application_type: 'native',
        },
      });
      expect(reg.status, show(reg)).toBe(201);
      const email = `conformance-${callbackPort}@example.com`;

      // The runner prints the authorization URL and waits for its callback: the person's step, as in a browser.
      const authorizePrefix = `${issuer}${OAUTH_PATHS.authorization}?`;
      let approval: Promise<void> | undefined;
      const stop = new AbortController();
      const personApproves = async (authorizationUrl: string) => {
        const browser = new FormBrowser(issuer, callback);
        const start = await browser.follow(authorizationUrl);
        expect(start.status, start.text).toBe(200);
        const uidPath = /action="(\/oauth\/interaction\/[^"/]+)\/email"/.exec(start.text)?.[1];
        expect(uidPath, start.text).toBeTruthy();
        const sent = await browser.request('POST', `${uidPath}/email`, { csrf: csrfOf(start.text), email });
        expect(sent.status, sent.text).toBe(200);
        const code = codeFromMail((await smtp.waitForMail(email)).text);
        const consent = await browser.request('POST', `${uidPath}/code`, { csrf: csrfOf(sent.text), email, code });
        expect(consent.status, consent.text).toBe(200);
        expect(consent.text).toContain(CLIENT_NAME);
        const done = await browser.request('POST', `${uidPath}/consent`, {
          csrf: csrfOf(consent.text),
          decision: 'approve',
          budget: '15',
          daily_cap: '4.00',
          per_call_max: '0.25',
        });
        expect(done.status, done.text).toBe(303);
        const back = await browser.follow(done.location!);
        expect(back.location?.startsWith(`${callback}?`), back.location ?? back.text).toBe(true);
        // The browser lands on the runner's callback server, which then exchanges the code.
        const landed = await fetch(back.location!);
        expect(landed.status).toBe(200);
      };

      const args = {
        url: issuer,
        'client-id': reg.body.client_id as string,
        resource: `${proxy.url}/mcp`,
        port: String(callbackPort),
        'spec-version': SPEC,
        'output-dir': path.join(outputDir, 'authorization'),
      };
      const run = await runConformance(
        ['authorization', ...Object.entries(args).flatMap(([name, value]) => [`--${name}`, value])],
        {
          timeoutMs: AUTHORIZATION_RUN_TIMEOUT_MS,
          signal: stop.signal,
          onStdout: (_chunk, all) => {
            if (approval) return;
            const url = all.split('\n').find((line) => line.startsWith(authorizePrefix));
            if (!url) return;
            approval = personApproves(url.trim());
            approval.catch(() => stop.abort()); // the runner would wait minutes for a callback that never comes
          },
        },
      );
      expect(approval, `the runner printed no authorization URL:\n${run.output.slice(-4_000)}`).toBeDefined();
      await approval;
      expect(run.timedOut, `the runner took over ${AUTHORIZATION_RUN_TIMEOUT_MS} ms:\n${run.output}`).toBe(false);

      const results = await readResults(path.join(outputDir, 'authorization'), 'authorization-server');
      expect([...results.keys()].sort()).toEqual([
        'authorization-code-grant',
        'authorization-server-metadata-endpoint',
      ]);
      // Every check succeeds, the metadata's Client ID Metadata Document support (only a warning when absent) too.
      const checks = [...results.values()].flatMap((r) => r.checks.map((c) => `${r.scenario} ${c.id}: ${c.status}`));
      expect(checks).toEqual([
        'authorization-code-grant authorization-code-grant: SUCCESS',
        'authorization-server-metadata-endpoint authorization-server-metadata: SUCCESS',
        'authorization-server-metadata-endpoint authorization-server-metadata-cimd: SUCCESS',
      ]);
      expect(run.code, run.output.slice(-4_000)).toBe(0);

      // The approval minted a key for the person's org with the caps they chose.
      const keys = await sql<{ budget_cents: string; daily_cap_cents: string; per_call_max_cents: string }>(
        stack.db.url,
        `select k.budget_cents, k.daily_cap_cents, k.per_call_max_cents from api_keys k
           join users u on u.org_id = k.org_id where u.email = $1 and k.name = $2`,
        [email, `OAuth: ${CLIENT_NAME}`],
      );
      expect(keys.map((k) => [k.budget_cents, k.daily_cap_cents, k.per_call_max_cents].map(Number))).toEqual([
        [1500, 400, 25],
      ]);
    },
    AUTHORIZATION_RUN_TIMEOUT_MS + 30_000,
  );
});
