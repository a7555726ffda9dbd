/**
 * The upstream smoke test (verify, publish, a revision's publish): call a few endpoints like a consumer would, with
 * the listing's credential, and keep the evidence. Each check names the `host:port` it called, and the verdict's
 * message is headed "Verification passed" or "Verification failed" and names where it failed (issue 31, section 4).
 */
import type { IApi, VerificationEvidence } from '../../db/entities/index.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import { applyCredential, redactUrl, type UpstreamCredential } from '../upstream/credentials.js';
import { UpstreamRequestError, type UpstreamGuard } from '../upstream/upstream-guard.js';

export const SMOKE_LIMITS = { maxBytes: 1024 * 1024, timeoutMs: 10_000, maxRedirects: 3, maxChecks: 10 } as const;

/** An endpoint to check: its id (null for one not stored yet), method, path and input schema. */
export interface SmokeTarget {
  endpoint_id: string;
  method: string;
  path: string;
  input_schema: Record<string, unknown> | null;
}

type Check = VerificationEvidence['checks'][number];

/** The GETs without path parameters (at most 10), else the first endpoint: what a smoke test calls. */
export function chooseTargets(endpoints: SmokeTarget[]): SmokeTarget[] {
  const simple = endpoints.filter((e) => e.method === 'GET' && !e.path.includes('{'));
  return (simple.length ? simple : endpoints.slice(0, 1)).slice(0, SMOKE_LIMITS.maxChecks);
}

/** `https://host/base` + `/forecast/{city}` with values for the parameters. */
export function upstreamUrl(baseUrl: string, path: string, params: Record<string, string> = {}): URL {
  const base = new URL(baseUrl);
  const filled = path.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, name: string) =>
    encodeURIComponent(params[name] ?? name),
  );
  const url = new URL(base.toString());
  url.pathname = `${base.pathname.replace(/\/+$/, '')}${filled}`;
  url.search = '';
  url.hash = '';
  return url;
}

/** `host:port` of a URL, the port named even when it is the scheme's default (443, 80). */
export function hostPort(url: URL): string {
  const port = url.port || (url.protocol === 'https:' ? '443' : url.protocol === 'http:' ? '80' : '');
  return port ? `${url.hostname}:${port}` : url.hostname;
}

/** Example values for a path's parameters from the endpoint's input schema (example, default, first enum value). */
function exampleParams(target: SmokeTarget): Record<string, string> {
  const props = (
    (target.input_schema?.properties as Record<string, unknown> | undefined)?.path as
      { properties?: Record<string, Record<string, unknown>> } | undefined
  )?.properties;
  const out: Record<string, string> = {};
  for (const [name, schema] of Object.entries(props ?? {})) {
    const value: unknown =
      schema.example ?? schema.default ?? (Array.isArray(schema.enum) ? (schema.enum as unknown[])[0] : undefined);
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') out[name] = String(value);
  }
  return out;
}

/** Why a call never got an answer, naming where it went (and the system's error code, when there is one). */
function failureText(err: unknown, target: string): string {
  if (!(err instanceof UpstreamRequestError)) return `could not reach ${target}: request failed`;
  const cause = (err.cause as { code?: unknown } | undefined)?.code;
  const code = typeof cause === 'string' ? ` (${cause})` : '';
  return `${err.reason}: could not reach ${target}: ${err.message}${code}`;
}

export interface SmokeDeps {
  guard: UpstreamGuard;
  clock: Clock;
  logger: Logger;
}

/** Call each target once and return the evidence (passed when there was a check and every one answered 2xx). */
export async function runSmokeTest(
  deps: SmokeDeps,
  api: Pick<IApi, 'id' | 'baseUrl'>,
  credential: UpstreamCredential | null,
  targets: SmokeTarget[],
): Promise<VerificationEvidence> {
  const checks: Check[] = [];
  for (const endpoint of targets) checks.push(await checkOne(deps, api, credential, endpoint));
  return {
    checked_at: deps.clock.now().toISOString(),
    passed: checks.length > 0 && checks.every((c) => c.ok),
    checks,
  };
}

async function checkOne(
  deps: SmokeDeps,
  api: Pick<IApi, 'id' | 'baseUrl'>,
  credential: UpstreamCredential | null,
  endpoint: SmokeTarget,
): Promise<Check> {
  const url = upstreamUrl(api.baseUrl, endpoint.path, exampleParams(endpoint));
  const target = hostPort(url);
  const head = { endpoint_id: endpoint.endpoint_id, method: endpoint.method, path: endpoint.path, target };
  const headers = {
    accept: 'application/json, */*;q=0.5',
    'user-agent': 'svc-marketplace-verify/1',
    ...(credential ? applyCredential(url, credential) : {}),
  };
  const started = performance.now();
  try {
    const res = await deps.guard.fetch(url.toString(), { ...SMOKE_LIMITS, method: endpoint.method, headers });
    const ok = res.status >= 200 && res.status <= 299;
    const latency_ms = Math.round(performance.now() - started);
    return { ...head, status: res.status, latency_ms, ok, error: ok ? null : `upstream answered HTTP ${res.status}` };
  } catch (err) {
    const error = failureText(err, target);
    deps.logger.info({ api_id: api.id, url: redactUrl(url, credential), error }, 'smoke test call failed');
    return { ...head, status: null, latency_ms: null, ok: false, error };
  }
}

/**
 * The verdict in one line, for a person or an agent: "Verification passed: …" or "Verification failed at
 * host:port: GET /path: upstream answered HTTP 500 (1 of 2 checks failed)."
 */
export function verificationMessage(evidence: VerificationEvidence): string {
  const targets = [...new Set(evidence.checks.map((c) => c.target).filter((t) => t !== undefined))];
  if (evidence.passed) {
    const n = evidence.checks.length;
    return `Verification passed: ${n} check${n === 1 ? '' : 's'} at ${targets.join(', ')} answered 2xx.`;
  }
  const failed = evidence.checks.filter((c) => !c.ok);
  const first = failed[0];
  if (!first) return 'Verification failed: there was no endpoint to check.';
  const where = first.target ? ` at ${first.target}` : '';
  const more = evidence.checks.length > 1 ? ` (${failed.length} of ${evidence.checks.length} checks failed)` : '';
  return `Verification failed${where}: ${first.method} ${first.path}: ${first.error ?? 'failed'}${more}.`;
}
