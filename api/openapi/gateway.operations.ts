/**
 * The gateway's documented operations: `ALL /v1/proxy/{apiSlug}/{path}` under each method it accepts (its
 * `GET /health` is the control plane's `/health`, same shape). Declared here rather than in gateway/ because the
 * import boundaries (.dependency-cruiser.mjs) keep api/ and gateway/ apart: the gateway's handler (gateway/proxy.ts)
 * is a plain request handler, not a Koa route, and this document is served by the control plane.
 */
import { z } from 'zod';
import { GatewayMeta } from '../../core/usage/usage.schemas.js';
import { empty, env, type HttpMethod, type Operation } from './operation.js';

const PROXY_METHODS: HttpMethod[] = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options'];

const proxyOperation = (method: HttpMethod): Operation => ({
  surface: 'gateway',
  method,
  path: '/v1/proxy/{apiSlug}/{path}',
  operationId: `proxy${method[0]!.toUpperCase()}${method.slice(1)}`,
  summary: `Call a catalog API (${method.toUpperCase()})`,
  tag: 'Gateway',
  auth: 'key',
  scope: 'proxy:call',
  description:
    '`path` is the rest of the upstream path and may contain `/`. Any method the upstream endpoint supports is ' +
    'allowed; method and body pass through. `Idempotency-Key` (or `X-Idempotency-Key`) makes a retry a replay: ' +
    '`meta.replayed` is true and `data` is null. A session token is refused with 401. An endpoint whose removal ' +
    'is announced answers with `Deprecation` and `Sunset` headers, and after the sunset 410 `endpoint_removed`; an ' +
    'archived API answers 410 `api_archived`.',
  ...(method === 'get' || method === 'head' || method === 'delete' || method === 'options'
    ? {}
    : { body: { raw: ['*/*'], description: "Passed to the upstream as is (the endpoint's input)." } }),
  success:
    method === 'head'
      ? { 200: empty('The upstream answered (HEAD: no body).') }
      : {
          200: env(
            z.unknown().describe("The upstream's answer (parsed JSON, else text); null on a replay."),
            'The upstream answered; meta carries the billing fields.',
            GatewayMeta,
          ),
        },
  errors: [402, 409, 410, 413, 422, 428, 429, 502],
});

export const GATEWAY_OPERATIONS: Operation[] = PROXY_METHODS.map(proxyOperation);
