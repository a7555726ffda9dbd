/**
 * The gateway's request handler: `ALL /v1/proxy/{apiSlug}/{path}` and `GET /health`, on bare node:http to keep
 * the hot path lean. Checks run in DESIGN.md's order, each before any spend or upstream call. This slice covers
 * bearer parsing (401, sessions refused), key lookup (401) and the `proxy:call` scope (403); listings do not exist
 * yet, so every slug is unknown (404) until the catalog lands.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseBearer } from '../core/auth/bearer.js';
import { requireScope } from '../core/auth/scopes.js';
import {
  InternalError,
  MethodNotAllowedError,
  NotFoundError,
  ServiceUnavailableError,
  toAppError,
  UnauthenticatedError,
} from '../core/errors.js';
import { fail, ok } from '../core/envelope.js';
import { resolveRequestId } from '../core/request-id.js';
import type { Services } from '../core/services.js';
import { sendError, sendJson } from './respond.js';

const PROXY_RE = /^\/v1\/proxy\/([^/?#]+)(\/[^?#]*)?$/;

export function createGatewayHandler(services: Services): (req: IncomingMessage, res: ServerResponse) => void {
  const log = services.logger.child({ surface: 'gateway' });

  async function proxy(req: IncomingMessage, requestId: string, slug: string): Promise<never> {
    const credential = parseBearer(req.headers.authorization);
    if (credential.type === 'session') {
      throw new UnauthenticatedError('The gateway accepts API keys only; session tokens are refused.');
    }
    const { principal } = await services.keys.authenticate(credential.token);
    requireScope(principal, 'proxy:call');
    log.debug({ request_id: requestId, slug }, 'proxy lookup');
    throw new NotFoundError(`No live API with slug "${slug}".`);
  }

  async function handle(req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> {
    const url = req.url ?? '/';
    const pathname = url.split('?', 1)[0]!;
    if (pathname === '/health') {
      if (req.method !== 'GET' && req.method !== 'HEAD') throw new MethodNotAllowedError(['GET', 'HEAD']);
      const report = await services.health.check('gateway');
      if (report.status === 'ok') sendJson(res, 200, ok(report, requestId), { 'X-Request-Id': requestId });
      else
        sendJson(
          res,
          503,
          fail(
            new ServiceUnavailableError('One or more components are unavailable.', { details: { ...report } }),
            requestId,
          ),
          { 'X-Request-Id': requestId },
        );
      return;
    }
    const match = PROXY_RE.exec(pathname);
    if (match) {
      let slug: string;
      try {
        slug = decodeURIComponent(match[1]!);
      } catch {
        throw new NotFoundError('Malformed API slug.');
      }
      await proxy(req, requestId, slug);
      return;
    }
    throw new NotFoundError(`No route for ${req.method ?? 'GET'} ${pathname}.`);
  }

  return (req, res) => {
    const requestId = resolveRequestId(req.headers['x-request-id']);
    const started = performance.now();
    // Drain any request body we do not read so keep-alive connections stay usable.
    req.resume();
    handle(req, res, requestId)
      .catch((err: unknown) => {
        const appError = toAppError(err);
        if (appError instanceof InternalError || appError.status >= 500) {
          log.error({ request_id: requestId, err: appError.cause ?? appError }, 'gateway request failed');
        }
        if (!res.headersSent) sendError(res, requestId, appError);
        else res.destroy();
      })
      .finally(() => {
        log.info(
          {
            request_id: requestId,
            method: req.method,
            path: req.url,
            status: res.statusCode,
            ms: Math.round((performance.now() - started) * 10) / 10,
          },
          'request',
        );
      });
  };
}
