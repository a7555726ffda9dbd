/**
 * The demo upstream (issue 31 item 7): the sample APIs of core/demo/demo-apis.ts served by the marketplace itself, on
 * the control plane's port under `/demo-upstream/{api}/…`, in front of the control plane's own routes (so none of its
 * middleware, rate limits included, applies: the gateway is its one caller). Its listings' base URLs are
 * `http://127.0.0.1:{API_PORT}/demo-upstream/{api}`; the SSRF guard admits exactly that origin and prefix by name
 * (core/upstream/named-upstream.ts) whatever UPSTREAM_ALLOW_PRIVATE says, and only while the demo is on.
 * Offline by construction: every answer is computed from data in this process.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from '../config.js';
import type { NamedUpstream } from '../upstream/named-upstream.js';
import { DEMO_APIS, type DemoAnswer, type DemoApi, type DemoEndpoint } from './demo-apis.js';
import { demoOpenApi } from './demo-openapi.js';

export const DEMO_UPSTREAM_PREFIX = '/demo-upstream/';
const MAX_BODY_BYTES = 256 * 1024;

type DemoConfig = Pick<Config, 'ports' | 'demoCatalog'>;

/** The control plane's port on loopback (an IP literal: no DNS answer can move it). */
export function demoUpstreamOrigin(config: Pick<Config, 'ports'>): string {
  return `http://127.0.0.1:${config.ports.api}`;
}

/** The demo upstream as the SSRF guard's named upstream while the demo is on (`--demo` or DEMO_CATALOG). */
export function demoNamedUpstream(config: DemoConfig): NamedUpstream | undefined {
  return config.demoCatalog ? { origin: demoUpstreamOrigin(config), pathPrefix: DEMO_UPSTREAM_PREFIX } : undefined;
}

/** A demo API's upstream base URL (its listing's `base_url`). */
export function demoBaseUrl(config: Pick<Config, 'ports'>, api: Pick<DemoApi, 'key'>): string {
  return `${demoUpstreamOrigin(config)}${DEMO_UPSTREAM_PREFIX}${api.key}`;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** The control plane's request handler with the demo upstream in front of it (its own path prefix only). */
export function withDemoUpstream(handler: Handler): Handler {
  return (req, res) => {
    if (!(req.url ?? '').startsWith(DEMO_UPSTREAM_PREFIX)) {
      handler(req, res);
      return;
    }
    serveDemoUpstream(req, res).catch(() => send(res, { status: 500, body: { error: { message: 'Demo failure.' } } }));
  };
}

interface Route {
  endpoint: DemoEndpoint;
  pattern: RegExp;
  names: string[];
}

const ROUTES = new Map<string, Route[]>(
  DEMO_APIS.map((api) => [
    api.key,
    api.endpoints.map((endpoint) => {
      const names: string[] = [];
      const source = endpoint.path.replace(/\{([A-Za-z_]\w*)\}/g, (_m, name: string) => {
        names.push(name);
        return '([^/]+)';
      });
      return { endpoint, pattern: new RegExp(`^${source}$`), names };
    }),
  ]),
);

async function serveDemoUpstream(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://demo.invalid');
  const rest = url.pathname.slice(DEMO_UPSTREAM_PREFIX.length);
  const slash = rest.indexOf('/');
  const key = slash === -1 ? rest : rest.slice(0, slash);
  const path = slash === -1 ? '/' : rest.slice(slash);
  const api = DEMO_APIS.find((a) => a.key === key);
  if (!api) return send(res, notFound(`No demo API "${key}".`));
  if (path === '/openapi.json' && req.method === 'GET') {
    return send(res, { status: 200, body: demoOpenApi(api, `${DEMO_UPSTREAM_PREFIX}${api.key}`) });
  }
  const matches = ROUTES.get(key)!.flatMap((r) => {
    const m = r.pattern.exec(path);
    return m ? [{ route: r, values: m.slice(1) }] : [];
  });
  if (matches.length === 0) return send(res, notFound(`${api.name} has no path ${path}.`));
  const hit = matches.find((m) => m.route.endpoint.method === req.method);
  if (!hit) {
    const allowed = matches.map((m) => m.route.endpoint.method).join(', ');
    return send(res, { status: 405, body: { error: { message: `Use ${allowed}.` } } }, { allow: allowed });
  }
  const body = await readJson(req);
  if (body instanceof Unreadable) return send(res, { status: body.status, body: { error: { message: body.message } } });
  const params = Object.fromEntries(hit.route.names.map((n, i) => [n, safeDecode(hit.values[i]!)]));
  send(res, hit.route.endpoint.handle({ query: url.searchParams, params, body, now: new Date() }));
}

const notFound = (message: string): DemoAnswer => ({ status: 404, body: { error: { message } } });

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** A request body the demo cannot take: 413 (too large) or 400. */
class Unreadable {
  constructor(
    readonly status: 400 | 413,
    readonly message: string,
  ) {}
}

/** The JSON body (undefined when there is none), or why it cannot be read. */
function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      // Over the limit the rest is read and dropped (so the caller gets its 413), up to a point.
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
      else if (size > 16 * MAX_BODY_BYTES) req.destroy();
    });
    req.on('error', () => resolve(new Unreadable(400, 'The body could not be read.')));
    req.on('end', () => {
      if (size > MAX_BODY_BYTES)
        return resolve(new Unreadable(413, `The body is larger than ${MAX_BODY_BYTES} bytes.`));
      const text = Buffer.concat(chunks).toString('utf8');
      if (text.trim() === '') return resolve(undefined);
      try {
        resolve(JSON.parse(text) as unknown);
      } catch {
        resolve(new Unreadable(400, 'The body is not valid JSON.'));
      }
    });
  });
}

function send(res: ServerResponse, answer: DemoAnswer, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  const text = JSON.stringify(answer.body);
  res.writeHead(answer.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(text);
}
