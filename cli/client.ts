/**
 * The CLI's HTTP client: one fetch per command against the control plane or the gateway, with a timeout, the
 * bearer credential the caller is entitled to, and the spec's envelope checked on the way back. A `{ ok: false }`
 * envelope, a network failure or an answer that is not an envelope becomes an `ApiFailure` (exit code 1).
 */

export interface FailureBody {
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

export type Envelope =
  | { ok: true; data: unknown; meta: Record<string, unknown> }
  | { ok: false; error: FailureBody; meta: Record<string, unknown> };

export interface ApiResponse<T = unknown> {
  status: number;
  headers: Headers;
  data: T;
  meta: Record<string, unknown>;
  /** The response body exactly as received: what `--json` prints. */
  text: string;
}

/** An API failure: exit code 1. `text` is the failure envelope to print with `--json`. */
export class ApiFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly text: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** A mistake in the command line itself: exit code 2, nothing is sent. */
export class UsageError extends Error {}

export interface Connection {
  baseUrl: string;
  gatewayUrl: string;
  timeoutMs: number;
  /** For the control plane: a session token or an API key. */
  controlToken?: string;
  /** For the gateway: an API key only (the gateway refuses sessions). */
  gatewayKey?: string;
}

export const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;
export type Method = (typeof METHODS)[number];

/** An operation of the published OpenAPI document (cli/operations.ts names the ones the CLI calls). */
export interface Operation<T = unknown> {
  method: Method;
  /** The document's path template: each `{name}` takes one percent-encoded segment. */
  path: string;
  plane: 'control' | 'gateway';
  /** The parameter that takes the rest of the path as given, `/` included (the gateway's `{path}`). */
  rest?: string;
  /** The success body is not an envelope (GET /v1/apis/{slug}/openapi). */
  raw?: boolean;
  /** Never set: the type of the success `data`. */
  readonly data?: T;
}

export interface RequestSpec {
  /** Values of the path template's `{name}`s. */
  params?: Record<string, string>;
  query?: [string, string][] | Record<string, string | number | undefined>;
  /** A JSON value (sent as JSON) or raw text (sent as given, with `contentType`). */
  body?: unknown;
  rawBody?: string;
  contentType?: string;
  headers?: Record<string, string>;
  /** Send no credential even when one is configured (registration, sign-in). */
  anonymous?: boolean;
  /**
   * On the control plane, send the profile's API key rather than its session (the quote: the gateway's answer for
   * the key `svc call` would use, since the gateway refuses sessions).
   */
  preferKey?: boolean;
}

/** The operation's path with its parameters filled in. */
export function expandPath(op: Operation, params: Record<string, string> = {}): string {
  return op.path.replace(/\{([A-Za-z0-9_]+)\}/g, (_m, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`${op.method} ${op.path}: no value for {${name}}`);
    return name === op.rest ? value : encodeURIComponent(value);
  });
}

/** A failure envelope the CLI makes itself (network errors, unreadable answers), printed as is with `--json`. */
export function localFailure(code: string, message: string): ApiFailure {
  const text = JSON.stringify({ ok: false, error: { code, message }, meta: { request_id: null } });
  return new ApiFailure(code, message, text);
}

export function buildUrl(base: string, path: string, query: RequestSpec['query']): string {
  const url = new URL(base.replace(/\/+$/, '') + path);
  const pairs = Array.isArray(query)
    ? query
    : Object.entries(query ?? {})
        .filter((e): e is [string, string | number] => e[1] !== undefined && e[1] !== '')
        .map(([k, v]): [string, string] => [k, String(v)]);
  for (const [k, v] of pairs) url.searchParams.append(k, v);
  return url.toString();
}

export async function request<T>(conn: Connection, op: Operation<T>, spec: RequestSpec = {}): Promise<ApiResponse<T>> {
  const gateway = op.plane === 'gateway';
  const url = buildUrl(gateway ? conn.gatewayUrl : conn.baseUrl, expandPath(op, spec.params), spec.query);
  const headers: Record<string, string> = { accept: 'application/json', ...spec.headers };
  const token = spec.anonymous ? undefined : gateway ? conn.gatewayKey : conn.controlToken;
  if (token) headers.authorization = `Bearer ${token}`;
  let body: string | undefined;
  if (spec.rawBody !== undefined) {
    body = spec.rawBody;
    headers['content-type'] = spec.contentType ?? 'application/json';
  } else if (spec.body !== undefined) {
    body = JSON.stringify(spec.body);
    headers['content-type'] = 'application/json';
  }

  let res: Response;
  let text: string;
  try {
    res = await fetch(url, {
      method: op.method,
      headers,
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(conn.timeoutMs),
    });
    text = await res.text();
  } catch (err) {
    throw localFailure('network_error', networkMessage(err, url, conn.timeoutMs));
  }

  // HEAD answers carry no body: the status is the answer.
  if (op.method === 'HEAD' && res.ok && text === '') {
    return { status: res.status, headers: res.headers, data: null as T, meta: {}, text };
  }
  const parsed = parseJson(text);
  if (op.raw && res.ok && parsed !== undefined) {
    return { status: res.status, headers: res.headers, data: parsed as T, meta: {}, text };
  }
  if (!isEnvelope(parsed)) {
    const start = text.slice(0, 120).replace(/\s+/g, ' ');
    throw localFailure('bad_response', `${op.method} ${url} answered ${res.status} without the envelope: ${start}`);
  }
  if (!parsed.ok) throw new ApiFailure(parsed.error.code, parsed.error.message, text, parsed.error.details);
  return { status: res.status, headers: res.headers, data: parsed.data as T, meta: parsed.meta, text };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isEnvelope(value: unknown): value is Envelope {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  if (v.ok === true) return 'data' in v && typeof v.meta === 'object' && v.meta !== null;
  if (v.ok === false) {
    const e = v.error as Record<string, unknown> | undefined;
    return typeof e === 'object' && e !== null && typeof e.code === 'string' && typeof e.message === 'string';
  }
  return false;
}

function networkMessage(err: unknown, url: string, timeoutMs: number): string {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError') return `no answer from ${new URL(url).origin} within ${timeoutMs / 1000} s`;
  const cause = e.cause?.code ?? e.cause?.message ?? e.message;
  return `cannot reach ${new URL(url).origin} (${cause})`;
}
