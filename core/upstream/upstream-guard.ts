/**
 * The SSRF guard every outgoing call to a provider-chosen URL goes through (registration checks, OpenAPI imports,
 * the gateway's proxying). A URL is checked before the request, every redirect hop is checked again, and the
 * dispatcher re-checks the addresses it actually connects to, so a DNS answer that changes between check and
 * connect (rebinding) cannot reach an internal address. Time and response size are bounded for the whole exchange.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { Agent, request, type Dispatcher } from 'undici';
import { AppError, type AppErrorOptions } from '../errors.js';
import { isNonPublicAddress } from './address-policy.js';
import { isNamedUpstream, type NamedUpstream } from './named-upstream.js';
import { endHttpSpan, startClientSpan, tracingOn } from '../tracing.js';

export type UpstreamFailureReason =
  | 'invalid_url'
  | 'unsupported_scheme'
  | 'blocked_address'
  | 'dns_failed'
  | 'connect_failed'
  | 'timeout'
  | 'too_large'
  | 'too_many_redirects';

/** A refused or failed upstream call. 400 by default: the URL is the caller's input; callers may remap (e.g. 502). */
export class UpstreamRequestError extends AppError {
  readonly reason: UpstreamFailureReason;

  constructor(reason: UpstreamFailureReason, message: string, options: AppErrorOptions = {}) {
    super('validation_failed', message, { ...options, details: { ...options.details, reason } });
    this.reason = reason;
  }
}

export type LookupAll = (hostname: string) => Promise<{ address: string; family: 4 | 6 }[]>;

export interface UpstreamGuardOptions {
  /** UPSTREAM_ALLOW_PRIVATE: development/tests only; allows non-public addresses and plain http. */
  allowPrivate: boolean;
  /** DNS resolution (default: dns.promises.lookup(host, { all: true })). Injectable for tests. */
  lookup?: LookupAll;
  /**
   * Addresses treated as public even though they are not (a test seam, e.g. ['127.0.0.2']). Plain http is also
   * accepted when every address a host resolves to is trusted, so tests can run servers without TLS.
   */
  trustedAddresses?: readonly string[];
  /** TCP/TLS connect timeout and DNS lookup timeout (default 5000). */
  connectTimeoutMs?: number;
  /** The one upstream allowed by name (see NamedUpstream), or none. */
  named?: NamedUpstream;
}

export interface GuardedFetchOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** The response body is aborted as soon as it exceeds this many bytes. */
  maxBytes: number;
  /** Bounds the whole exchange: DNS, connect, every redirect hop and reading the body. */
  timeoutMs: number;
  /** Default 3. */
  maxRedirects?: number;
}

export interface GuardedResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** The final URL, after redirects. */
  url: string;
  redirects: number;
}

const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
const DEFAULT_MAX_REDIRECTS = 3;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
// Headers that describe the request body; dropped with it when a redirect turns the request into a GET.
const BODY_HEADERS = new Set(['content-type', 'content-length', 'content-encoding', 'transfer-encoding']);
// Credentials meant for the registered upstream must not follow a redirect to another origin (as fetch() does).
const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie']);

const defaultLookup: LookupAll = async (hostname) => {
  const results = await dnsLookup(hostname, { all: true });
  return results.map((r) => ({ address: r.address, family: r.family === 6 ? 6 : 4 }));
};

function stripBrackets(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

function blockedError(host: string): UpstreamRequestError {
  // The resolved address stays out of the message: it would let callers map our internal DNS.
  return new UpstreamRequestError('blocked_address', `Host ${host} resolves to a non-public address.`);
}

/** Our own error anywhere in a cause chain (net and undici wrap errors raised inside the connect lookup). */
export function findUpstreamError(err: unknown): UpstreamRequestError | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current instanceof UpstreamRequestError) return current;
    current = current.cause;
  }
  return undefined;
}

function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

export class UpstreamGuard {
  readonly dispatcher: Agent;
  private readonly allowPrivate: boolean;
  private readonly resolve: LookupAll;
  private readonly trusted: ReadonlySet<string>;
  private readonly connectTimeoutMs: number;

  /** The options it was built with, so another client (the gateway's pools) can apply the same policy. */
  readonly options: UpstreamGuardOptions;

  constructor(options: UpstreamGuardOptions) {
    this.options = options;
    this.allowPrivate = options.allowPrivate;
    this.resolve = options.lookup ?? defaultLookup;
    this.trusted = new Set(options.trustedAddresses ?? []);
    this.connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    this.dispatcher = new Agent({
      connect: { timeout: this.connectTimeoutMs, lookup: this.connectLookup },
    });
  }

  /**
   * Parse and check a URL: only http/https (https only unless allowPrivate); no userinfo; hostname must resolve,
   * and every resolved address must be public (unless allowPrivate or trusted), or the URL is the named upstream's.
   * Returns the parsed URL.
   */
  async checkUrl(raw: string): Promise<URL> {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new UpstreamRequestError('invalid_url', 'The URL is not a valid absolute URL.');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new UpstreamRequestError('unsupported_scheme', `The URL scheme ${url.protocol} is not allowed.`);
    }
    if (url.username !== '' || url.password !== '') {
      throw new UpstreamRequestError('invalid_url', 'The URL must not contain credentials.');
    }
    const host = stripBrackets(url.hostname);
    if (host === '') throw new UpstreamRequestError('invalid_url', 'The URL has no host.');
    if (isNamedUpstream(url, this.options.named)) return url;

    // The WHATWG parser has already turned decimal, octal and hex IPv4 spellings into dotted quads.
    const addresses = isIP(host) !== 0 ? [host] : (await this.lookupHost(host)).map((r) => r.address);
    for (const address of addresses) {
      if (!this.isAllowedAddress(address)) throw blockedError(host);
    }
    if (url.protocol === 'http:' && !this.allowPrivate && !addresses.every((a) => this.trusted.has(a))) {
      throw new UpstreamRequestError('unsupported_scheme', 'Only https URLs are allowed.');
    }
    return url;
  }

  /**
   * checkUrl, then request through `dispatcher`; redirects followed manually (each hop re-checked, at most
   * maxRedirects, 301/302/303 turn into GET without body); the whole exchange bounded by timeoutMs; the body read
   * as a stream and aborted as soon as it exceeds maxBytes, also refusing early on a larger Content-Length.
   */
  async fetch(url: string, options: GuardedFetchOptions): Promise<GuardedResponse> {
    if (!tracingOn()) return this.fetchUntraced(url, options);
    // Tracing on: one client span for the whole exchange (redirects included), its traceparent sent along. The span
    // names the host only: a URL may carry a credential in its query.
    const headers = { ...options.headers };
    const method = (options.method ?? 'GET').toUpperCase();
    let host = '';
    try {
      host = new URL(url).hostname;
    } catch {
      // checkUrl refuses it below
    }
    const span = startClientSpan(`${method} upstream`, headers, {
      'http.request.method': method,
      'server.address': host,
    });
    try {
      const res = await this.fetchUntraced(url, { ...options, headers });
      endHttpSpan(span, res.status, 'client');
      return res;
    } catch (err) {
      endHttpSpan(span, 0, 'client', err);
      throw err;
    }
  }

  private async fetchUntraced(url: string, options: GuardedFetchOptions): Promise<GuardedResponse> {
    const controller = new AbortController();
    const timeoutError = new UpstreamRequestError(
      'timeout',
      `The upstream request did not complete within ${options.timeoutMs} ms.`,
    );
    let timer: NodeJS.Timeout | undefined;
    // DNS lookups cannot be aborted, so the deadline races the whole exchange as well as aborting the request.
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        controller.abort(timeoutError);
        reject(timeoutError);
      }, options.timeoutMs);
    });
    try {
      return await Promise.race([this.exchange(url, options, controller.signal), deadline]);
    } catch (err) {
      throw this.toUpstreamError(err, controller.signal, timeoutError);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
  }

  private async exchange(raw: string, options: GuardedFetchOptions, signal: AbortSignal): Promise<GuardedResponse> {
    const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
    let method = (options.method ?? 'GET').toUpperCase();
    let headers: Record<string, string> = { ...options.headers };
    let body = options.body;
    let current = raw;
    let redirects = 0;

    for (;;) {
      const url = await this.checkUrl(current);
      signal.throwIfAborted();
      const res = await request(url, {
        dispatcher: this.dispatcher,
        method,
        headers,
        body,
        signal,
      });

      const location = res.headers.location;
      if (REDIRECT_STATUSES.has(res.statusCode) && typeof location === 'string') {
        // Not reading the redirect body: discarding it costs a connection but never buffers anything.
        discard(res.body);
        redirects++;
        if (redirects > maxRedirects) {
          throw new UpstreamRequestError('too_many_redirects', `More than ${maxRedirects} redirects.`);
        }
        let next: URL;
        try {
          next = new URL(location, url);
        } catch {
          throw new UpstreamRequestError('invalid_url', 'The upstream redirected to an invalid URL.');
        }
        const turnsIntoGet =
          res.statusCode === 303 ? method !== 'HEAD' : res.statusCode !== 307 && res.statusCode !== 308;
        if (turnsIntoGet && method !== 'GET' && method !== 'HEAD') {
          method = 'GET';
          body = undefined;
          headers = Object.fromEntries(Object.entries(headers).filter(([k]) => !BODY_HEADERS.has(k.toLowerCase())));
        }
        if (next.origin !== url.origin) {
          headers = Object.fromEntries(
            Object.entries(headers).filter(([k]) => !CREDENTIAL_HEADERS.has(k.toLowerCase())),
          );
        }
        current = next.href;
        continue;
      }

      return {
        status: res.statusCode,
        headers: res.headers,
        body: await readBounded(res.body, options.maxBytes, res.headers['content-length']),
        url: url.href,
        redirects,
      };
    }
  }

  /** The address policy (allowPrivate, trusted, else public only); public so other dispatchers share it. */
  isAllowedAddress(address: string): boolean {
    return this.allowPrivate || this.trusted.has(address) || !isNonPublicAddress(address);
  }

  private async lookupHost(host: string): Promise<{ address: string; family: 4 | 6 }[]> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () => reject(new UpstreamRequestError('timeout', `DNS lookup for ${host} timed out.`)),
        this.connectTimeoutMs,
      );
    });
    let results: { address: string; family: 4 | 6 }[];
    try {
      results = await Promise.race([this.resolve(host), timeout]);
    } catch (err) {
      if (err instanceof UpstreamRequestError) throw err;
      throw new UpstreamRequestError('dns_failed', `Host ${host} could not be resolved.`, { cause: err });
    } finally {
      clearTimeout(timer);
    }
    if (results.length === 0) throw new UpstreamRequestError('dns_failed', `Host ${host} could not be resolved.`);
    return results;
  }

  /**
   * net.connect's lookup hook: resolve again at connect time and refuse if any answer is non-public, so the address
   * we connect to is one we checked. Node skips this hook for IP-literal hosts; checkUrl covers those.
   * Public so other dispatchers (the gateway's per-origin pools) enforce the same policy at connect time.
   */
  readonly connectLookup = (
    hostname: string,
    options: LookupOptions,
    callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    const host = stripBrackets(hostname);
    this.lookupHost(host).then(
      (results) => {
        if (results.some((r) => !this.isAllowedAddress(r.address))) {
          callback(blockedError(host), '');
          return;
        }
        const wanted = options.family === 4 || options.family === 6 ? options.family : undefined;
        const usable = wanted === undefined ? results : results.filter((r) => r.family === wanted);
        const first = usable[0];
        if (!first) {
          callback(new UpstreamRequestError('dns_failed', `Host ${host} has no usable address.`), '');
          return;
        }
        if (options.all) callback(null, usable);
        else callback(null, first.address, first.family);
      },
      (err: unknown) => callback(err as NodeJS.ErrnoException, ''),
    );
  };

  private toUpstreamError(err: unknown, signal: AbortSignal, timeoutError: UpstreamRequestError): UpstreamRequestError {
    const ours = findUpstreamError(err);
    if (ours) return ours;
    if (signal.aborted) return timeoutError;
    const code = errorCode(err);
    if (
      code === 'UND_ERR_CONNECT_TIMEOUT' ||
      code === 'UND_ERR_HEADERS_TIMEOUT' ||
      code === 'UND_ERR_BODY_TIMEOUT' ||
      code === 'ETIMEDOUT'
    ) {
      return new UpstreamRequestError('timeout', 'The upstream request timed out.', { cause: err });
    }
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME') {
      return new UpstreamRequestError('dns_failed', 'The upstream host could not be resolved.', { cause: err });
    }
    return new UpstreamRequestError('connect_failed', 'The upstream request failed.', { cause: err });
  }
}

/** Drop a response body unread. undici's destroy() emits an AbortError; nobody else is listening, so swallow it. */
function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => {});
  body.destroy();
}

/** Read a body into memory, refusing as soon as it (or its declared length) exceeds maxBytes. */
async function readBounded(
  body: Dispatcher.ResponseData['body'],
  maxBytes: number,
  contentLength: string | string[] | undefined,
): Promise<Buffer> {
  const tooLarge = (): UpstreamRequestError =>
    new UpstreamRequestError('too_large', `The upstream response is larger than the ${maxBytes}-byte limit.`);
  const declared = typeof contentLength === 'string' ? Number(contentLength) : NaN;
  if (Number.isFinite(declared) && declared > maxBytes) {
    discard(body);
    throw tooLarge();
  }
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of body) {
      const buf = chunk as Buffer;
      total += buf.length;
      if (total > maxBytes) throw tooLarge();
      chunks.push(buf);
    }
  } finally {
    // Leaving the loop early (too large, aborted) must release the connection rather than leave it half-read.
    if (!body.destroyed) discard(body);
  }
  return Buffer.concat(chunks, total);
}
