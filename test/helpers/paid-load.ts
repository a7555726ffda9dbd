/**
 * Paid-call load for crash and fault tests: concurrent calls through one or more gateways until stopped, half with an
 * Idempotency-Key (a third of those reused, so replays happen), about a tenth on a tight-budget key; every answer is
 * recorded (status 0 = no answer) for the books check (test/helpers/books.ts).
 */
import { randomBytes } from 'node:crypto';
import type { CallAnswer } from './books.js';

export const CALL_TIMEOUT_MS = 10_000;
const CONCURRENCY = 12;

/** A paid listing and two keys of one consumer: `main` (plenty) and `tight` (a small budget). */
export interface PaidFixture {
  slug: string;
  mainKey: string;
  tightKey: string;
  /** The paid endpoint's path (default `/paid`). */
  path?: string;
}

export interface LoadOptions {
  concurrency?: number;
  idempotencyPrefix?: string;
}

/** One recorded answer, with what the load loop knows about the call. */
export interface Recorded extends CallAnswer {
  target: number;
  key: 'main' | 'tight';
  idempotencyKey?: string;
  at: number;
  error?: string;
}

export interface Load {
  answers: Recorded[];
  /** Targets (gateway indexes) the loop no longer sends to, as a load balancer would after a failed connection. */
  retire(target: number): void;
  stop(): Promise<Recorded[]>;
}

export async function call(
  base: string,
  slug: string,
  token: string,
  idempotencyKey: string | undefined,
  path = '/paid',
): Promise<Omit<Recorded, 'target' | 'key' | 'at'>> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
  try {
    const res = await fetch(`${base}/v1/proxy/${slug}${path}`, {
      headers,
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    });
    const text = await res.text();
    let body: any;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    const meta = body?.meta ?? {};
    return {
      status: res.status,
      requestId: meta.request_id ?? res.headers.get('x-request-id') ?? undefined,
      costCents: typeof meta.cost_cents === 'number' ? meta.cost_cents : undefined,
      replayed: meta.replayed === true,
      originalRequestId: meta.original_request_id,
      code: body?.error?.code,
      idempotencyKey,
    };
  } catch (err) {
    return { status: 0, error: (err as Error).message, idempotencyKey };
  }
}

/** Concurrent paid calls spread over `targets` until stopped: half with an Idempotency-Key, a third of those reused. */
export function startLoad(targets: string[], f: PaidFixture, options: LoadOptions = {}): Load {
  const answers: Recorded[] = [];
  const retired = new Set<number>();
  const recentKeys: Record<'main' | 'tight', string[]> = { main: [], tight: [] };
  let running = true;
  let n = 0;
  const worker = async (w: number) => {
    while (running) {
      const live = targets.map((_, i) => i).filter((i) => !retired.has(i));
      const target = live[(w + n++) % live.length]!;
      const key = Math.random() < 0.1 ? 'tight' : 'main';
      let idem: string | undefined;
      if (Math.random() < 0.5) {
        const pool = recentKeys[key];
        if (pool.length > 0 && Math.random() < 0.33) idem = pool[Math.floor(Math.random() * pool.length)];
        else {
          idem = `${options.idempotencyPrefix ?? 'load'}-${randomBytes(6).toString('hex')}`;
          pool.push(idem);
          if (pool.length > 50) pool.shift();
        }
      }
      const at = Date.now();
      const answer = await call(targets[target]!, f.slug, key === 'main' ? f.mainKey : f.tightKey, idem, f.path);
      answers.push({ ...answer, target, key, at });
      if (answer.status === 0 || answer.status >= 500) await new Promise((r) => setTimeout(r, 25));
    }
  };
  const workers = Array.from({ length: options.concurrency ?? CONCURRENCY }, (_, w) => worker(w));
  return {
    answers,
    retire: (t) => retired.add(t),
    async stop() {
      running = false;
      await Promise.all(workers);
      return answers;
    },
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Statuses by count, for failure messages. */
export function tally(answers: readonly Recorded[]): Record<string, number> {
  const t: Record<string, number> = {};
  for (const a of answers) {
    const k = `${a.status}${a.code ? ` ${a.code}` : ''}${a.error ? ` (${a.error})` : ''}`;
    t[k] = (t[k] ?? 0) + 1;
  }
  return t;
}
