/**
 * The Redis settings the money path's durability contract needs (docs/durability.md, "Redis settings"), checked by
 * every process that hosts it (the gateway, the agent-tool server's in-process gateway, `npm start`), on start and on
 * every reconnect, on each master of a cluster:
 *
 * - `maxmemory-policy noeviction`, always: reservations, pending spend, idempotency records and the usage stream must
 *   never be evicted (an evicted `pend` or stream entry is spend nobody counts or bills).
 * - in production, `appendonly yes` with `appendfsync always`: a call is answered once it is in the usage stream, and
 *   with `everysec` Redis may defer writing (not only fsyncing) the append-only buffer for up to 2 s while a slow
 *   background fsync runs, so a crash of the Redis process alone could lose answered calls. Outside production a
 *   Redis without that is accepted with one warning naming what its crash loses.
 *
 * A managed Redis that refuses CONFIG GET can be accepted with REDIS_REQUIREMENTS_CHECK=off (a loud warning at each
 * start: the operator vouches for the settings).
 */
import { Cluster, type Redis } from 'ioredis';
import type { Logger } from '../logger.js';

export class RedisRequirementsError extends Error {
  override readonly name = 'RedisRequirementsError';
}

export interface RedisRequirementsOptions {
  /** Production refuses a Redis without `appendonly yes` and `appendfsync always`. */
  production: boolean;
  /** REDIS_REQUIREMENTS_CHECK: `off` skips the check (managed Redis without CONFIG). */
  check: 'on' | 'off';
}

type Settings = Record<'maxmemory-policy' | 'appendonly' | 'appendfsync', string>;

async function settingsOf(node: Redis): Promise<Settings> {
  const reply = (await node.config('GET', 'maxmemory-policy', 'appendonly', 'appendfsync')) as unknown;
  const flat = (Array.isArray(reply) ? reply.flat(2) : []) as string[];
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i]!] = flat[i + 1]!;
  return out as Settings;
}

/** What is wrong with one node's settings (empty: fine), each naming the setting and how to change it. */
export function problemsOf(s: Settings, production: boolean): string[] {
  const problems: string[] = [];
  if (s['maxmemory-policy'] !== 'noeviction') {
    problems.push(
      `maxmemory-policy is ${s['maxmemory-policy']}, it must be noeviction (reservations, pending spend and the ` +
        'usage stream must never be evicted): run `CONFIG SET maxmemory-policy noeviction` and put ' +
        '`maxmemory-policy noeviction` in redis.conf',
    );
  }
  if (production && s.appendonly !== 'yes') {
    problems.push(
      `appendonly is ${s.appendonly}, production needs yes (answered calls live in the usage stream until Postgres ` +
        'has them): run `CONFIG SET appendonly yes` and put `appendonly yes` in redis.conf',
    );
  }
  if (production && s.appendfsync !== 'always') {
    problems.push(
      `appendfsync is ${s.appendfsync}, production needs always (with everysec Redis may defer writing answered ` +
        'calls for up to 2 s, so even a crash of the Redis process loses them): run ' +
        '`CONFIG SET appendfsync always` and put `appendfsync always` in redis.conf',
    );
  }
  return problems;
}

function nodesOf(client: Redis | Cluster): Redis[] {
  return client instanceof Cluster ? client.nodes('master') : [client];
}

/**
 * Check every master now. Throws RedisRequirementsError naming each broken setting; outside production, warns once
 * per call when persistence is off or weaker than `appendfsync always`.
 */
export async function checkRedisRequirements(
  client: Redis | Cluster,
  options: RedisRequirementsOptions,
  log: Logger,
): Promise<void> {
  if (options.check === 'off') {
    log.warn(
      'REDIS_REQUIREMENTS_CHECK=off: the Redis settings the money path needs (maxmemory-policy noeviction; in ' +
        'production appendonly yes, appendfsync always) are NOT checked. If they do not hold, answered calls and ' +
        'pending spend can be lost (docs/durability.md).',
    );
    return;
  }
  const problems: string[] = [];
  let weak: string | undefined;
  for (const node of nodesOf(client)) {
    let s: Settings;
    try {
      s = await settingsOf(node);
    } catch (err) {
      throw new RedisRequirementsError(
        `Redis refused CONFIG GET (${(err as Error).message}), so its eviction and persistence settings cannot be ` +
          'checked. Allow CONFIG GET, or set REDIS_REQUIREMENTS_CHECK=off after making sure of maxmemory-policy ' +
          'noeviction (and, in production, appendonly yes and appendfsync always); see docs/durability.md.',
      );
    }
    const where = `${node.options.host}:${node.options.port}`;
    for (const p of problemsOf(s, options.production)) problems.push(`${where}: ${p}`);
    if (s.appendonly !== 'yes' || s.appendfsync !== 'always')
      weak = `appendonly ${s.appendonly}, appendfsync ${s.appendfsync}`;
  }
  if (problems.length) {
    throw new RedisRequirementsError(
      `Redis does not meet the money path's requirements (docs/durability.md):\n  - ${problems.join('\n  - ')}`,
    );
  }
  if (weak) {
    log.warn(
      `Redis runs with ${weak}: a crash of Redis can lose answered calls not yet in Postgres (normally ` +
        "milliseconds of them; with appendonly no, a restart loses all of Redis's data). Production refuses this: " +
        'it needs appendonly yes and appendfsync always (docs/durability.md).',
    );
  }
}

/**
 * Check on start (throws: the process refuses to start), then again on every reconnect ('ready'): a violation found
 * then is reported to `onChange` (paid calls are refused until a later check passes).
 */
export async function enforceRedisRequirements(
  client: Redis | Cluster,
  options: RedisRequirementsOptions,
  log: Logger,
  onChange: (violation: RedisRequirementsError | null) => void,
): Promise<void> {
  await checkRedisRequirements(client, options, log);
  if (options.check === 'off') return;
  const recheck = () => {
    checkRedisRequirements(client, options, log).then(
      () => onChange(null),
      (err: unknown) => {
        if (!(err instanceof RedisRequirementsError)) return;
        log.error({ err: err.message }, 'Redis no longer meets the money path requirements; paid calls are refused');
        onChange(err);
      },
    );
  };
  client.on('ready', recheck);
  if (client instanceof Cluster) client.on('+node', (node: Redis) => node.on('ready', recheck));
}
