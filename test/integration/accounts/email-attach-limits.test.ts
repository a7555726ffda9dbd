// POST /v1/me/email shares signup's budget per client address (SIGNUP_RATE_LIMIT_PER_HOUR), on top of its 5 per org:
// one address cannot mail links to strangers by registering org after org (docs/decisions.md, "Agent-first
// elevation"). A stack of its own, so the low limit touches no other test.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../../api/app.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { expectFailure, http, serve, describe as show } from '../../helpers/http.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';
import { startSmtpCapture, type SmtpCapture } from '../../helpers/smtp.js';
import { closeAll } from '../../helpers/fixtures.js';

describe('attaching an email: the per-address limit', () => {
  let stack: TestStack;
  let server: RunningHttpServer;
  let smtp: SmtpCapture;

  beforeAll(async () => {
    smtp = await startSmtpCapture();
    stack = await createTestStack({ env: { SMTP_URL: smtp.url, SIGNUP_RATE_LIMIT_PER_HOUR: '3' } });
    server = await serve(createApiApp(stack.services).callback());
  });
  afterAll(async () => {
    await closeAll(server, stack, smtp);
  });

  async function register(): Promise<string> {
    const res = await http(server.url, 'POST', '/v1/register');
    expect(res.status, show(res)).toBe(201);
    return res.body.data.api_key as string;
  }

  it('counts attach requests from one address across orgs together with signups (429 with Retry-After)', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await http(server.url, 'POST', '/v1/me/email', {
        token: await register(),
        body: { email: `agent-${i}@example.com` },
      });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([200, 200, 200]);
    // A fourth org from the same address, under its own per-org limit, is refused by the address's.
    const res = await http(server.url, 'POST', '/v1/me/email', {
      token: await register(),
      body: { email: 'agent-4@example.com' },
    });
    expectFailure(res, 429, 'rate_limited');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    // Signup from that address draws on the same budget.
    expectFailure(
      await http(server.url, 'POST', '/v1/signup', { body: { email: 'person@example.com' } }),
      429,
      'rate_limited',
    );
    expect(smtp.messages.filter((m) => m.to.some((to: string) => to.includes('agent-4')))).toEqual([]);
  });
});
