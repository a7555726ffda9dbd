/** stripe-mock (built into .tools/bin) on a free port, for the billing tests. */
import { spawn } from 'node:child_process';
import net from 'node:net';
import Stripe from 'stripe';
import { STRIPE_MOCK } from './env.js';
import { serve } from './http.js';
import { sql } from './db.js';
import { freePort, waitFor } from './ports.js';

export interface StripeMock {
  url: string;
  port: number;
  stop(): Promise<void>;
}

export async function startStripeMock(): Promise<StripeMock> {
  const port = await freePort();
  const child = spawn(STRIPE_MOCK, ['-http-port', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  child.stderr.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-2_000)));
  await waitFor(
    () =>
      new Promise<boolean>((resolve) => {
        if (exited) throw new Error(`stripe-mock exited: ${stderr}`);
        const s = net.connect(port, '127.0.0.1');
        s.once('connect', () => (s.destroy(), resolve(true)));
        s.once('error', () => resolve(false));
      }),
    { timeoutMs: 15_000, what: 'stripe-mock' },
  );
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        if (exited) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

export interface RecordedStripeCall {
  method: string;
  path: string;
  idempotencyKey: string | undefined;
  /** Form parameters as Stripe's SDK sends them (`metadata[org_id]` etc.). */
  params: Record<string, string>;
}

export interface StripeRecorder {
  url: string;
  calls: RecordedStripeCall[];
  /** Answer the next call to `path` with a Stripe error instead of forwarding it (as the live API would refuse). */
  failNext(path: string, status: number, error: { type: string; message: string; code?: string }): void;
  close(): Promise<void>;
}

/** A recording proxy in front of stripe-mock: every call our code makes to Stripe, with its parameters. */
export async function startStripeRecorder(mock: StripeMock): Promise<StripeRecorder> {
  const calls: RecordedStripeCall[] = [];
  const failures = new Map<string, { status: number; error: object }>();
  const server = await serve((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const url = new URL(req.url ?? '/', 'http://x');
      calls.push({
        method: req.method ?? 'GET',
        path: url.pathname,
        idempotencyKey: req.headers['idempotency-key'] as string | undefined,
        params: Object.fromEntries(new URLSearchParams(req.method === 'GET' ? url.search : body)),
      });
      const failure = failures.get(url.pathname);
      if (failure) {
        failures.delete(url.pathname);
        res.writeHead(failure.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: failure.error }));
        return;
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers))
        if (typeof v === 'string' && k !== 'host' && k !== 'content-length') headers[k] = v;
      fetch(`${mock.url}${req.url}`, { method: req.method, headers, body: req.method === 'GET' ? undefined : body })
        .then(async (upstream) => {
          const text = await upstream.text();
          res.writeHead(upstream.status, {
            'content-type': upstream.headers.get('content-type') ?? 'application/json',
          });
          res.end(text);
        })
        .catch(() => {
          res.writeHead(502);
          res.end();
        });
    });
  });
  return {
    url: server.url,
    calls,
    failNext: (path, status, error) => failures.set(path, { status, error }),
    close: () => server.close(),
  };
}

const signer = new Stripe('sk_test_signer');

/** A webhook delivery signed the way Stripe signs it (Stripe.webhooks.generateTestHeaderString). */
export function signStripeEvent(
  event: Record<string, unknown>,
  secret: string,
  timestamp = Math.floor(Date.now() / 1000),
): { payload: string; header: string } {
  const payload = JSON.stringify({
    object: 'event',
    api_version: '2026-10-28.endive',
    created: timestamp,
    livemode: false,
    ...event,
  });
  return { payload, header: signer.webhooks.generateTestHeaderString({ payload, secret, timestamp }) };
}

/**
 * Wait until an org's off-session charge of `kind` has reached Stripe (the payment row holds the intent id), and
 * return it (the newest, when `status` narrows nothing).
 */
export async function waitForCharge(
  dbUrl: string,
  orgId: string,
  kind: 'auto_reload' | 'usage_charge',
  status?: 'pending',
): Promise<{ id: string; stripe_ref: string }> {
  return waitFor(
    async () =>
      (
        await sql<{ id: string; stripe_ref: string }>(
          dbUrl,
          `select id, stripe_ref from payments where org_id = $1 and kind = $2 and stripe_ref is not null
             ${status ? 'and status = $3' : ''} order by created_at desc limit 1`,
          status ? [orgId, kind, status] : [orgId, kind],
        )
      )[0],
    { timeoutMs: 15_000, what: `a ${kind} charge of ${orgId}` },
  );
}
