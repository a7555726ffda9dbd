/**
 * `GET /v1/openapi.json`: the OpenAPI 3.1.0 document (api/openapi/document.ts), raw JSON without the envelope,
 * built once per process. `GET /docs`: the browsable reference (swagger-ui-dist, served from our own copy of its
 * assets under `/docs/assets/{file}`, a fixed list: no path from the request reaches the file system). The page's
 * CSP allows `script-src 'self'` for this page only; the init script is ours (no inline script).
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type Router from '@koa/router';
import { NotFoundError } from '../../core/errors.js';
import type { AppState } from '../context.js';
import { openApiDocument, type DocumentServers } from './document.js';
import { html, media, rawJson } from './operation.js';
import { openApiDocumentSchema } from '../../core/openapi-document.js';
import { mountRoutes, route } from './route.js';

/** The reference page's policy: "Try it out" may reach this control plane and this deployment's gateway. */
export function referenceCsp(gatewayUrl: string): string {
  const gateway = URL.parse(gatewayUrl)?.origin;
  const connect = gateway && gateway !== 'null' ? `'self' ${gateway}` : "'self'";
  return (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
    `connect-src ${connect}; font-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`
  );
}

/** Our init script: render /v1/openapi.json into #swagger-ui. */
const INIT_SCRIPT = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/v1/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    layout: 'StandaloneLayout',
    validatorUrl: null,
  });
});
`;

const REFERENCE_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/swagger-ui-standalone-preset.js"></script>
<script src="/docs/assets/init.js"></script>
</body>
</html>
`;

/** The files of swagger-ui-dist we serve, with their types. */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

/** swagger-ui-dist's package directory (it ships no typings, so resolve it rather than import it). */
const SWAGGER_UI_DIR = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

const assetCache = new Map<string, Buffer>();

async function asset(file: string): Promise<Buffer> {
  let bytes = assetCache.get(file);
  if (!bytes) {
    bytes = await readFile(path.join(SWAGGER_UI_DIR, file));
    assetCache.set(file, bytes);
  }
  return bytes;
}

interface ReferenceDeps {
  servers: DocumentServers;
  csp: string;
}

const reference = { method: 'get', tag: 'Reference', auth: 'none' } as const;

/**
 * This document's own shape (its top level; paths and components are OpenAPI's own structures). The version is
 * document.ts `OPENAPI_VERSION`, written out: document.ts gathers these routes, so it is not initialised here yet.
 */
const OpenApiDocument = openApiDocumentSchema('3.1.0', 'This OpenAPI 3.1.0 document, served raw (no envelope).');

export const REFERENCE_ROUTES = [
  route<'none', undefined, undefined, ReferenceDeps>(
    {
      ...reference,
      path: '/v1/openapi.json',
      operationId: 'getOpenApiDocument',
      summary: 'This document (raw OpenAPI 3.1.0, no envelope)',
      success: { 200: rawJson(OpenApiDocument, 'The document.') },
    },
    (ctx, { services }) => {
      ctx.type = 'application/json; charset=utf-8';
      ctx.set('Cache-Control', 'public, max-age=300');
      ctx.body = openApiDocument(services.servers).text;
    },
  ),
  route<'none', undefined, undefined, ReferenceDeps>(
    {
      ...reference,
      path: '/docs',
      operationId: 'getApiReference',
      summary: 'The browsable API reference (HTML)',
      html: true,
      success: { 200: html('The reference page.') },
    },
    (ctx, { services }) => {
      ctx.type = 'text/html; charset=utf-8';
      ctx.set('Content-Security-Policy', services.csp);
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.body = REFERENCE_PAGE;
    },
  ),
  route<'none', undefined, undefined, ReferenceDeps, '/docs/assets/{file}'>(
    {
      ...reference,
      path: '/docs/assets/{file}',
      operationId: 'getApiReferenceAsset',
      summary: "The reference page's scripts and styles (our own copies)",
      html: true,
      success: { 200: media('*/*', 'The asset.') },
    },
    async (ctx, { params }) => {
      const { file } = params;
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.set('Cache-Control', 'public, max-age=3600');
      if (file === 'init.js') {
        ctx.type = 'text/javascript; charset=utf-8';
        ctx.body = INIT_SCRIPT;
        return;
      }
      const type = Object.hasOwn(ASSETS, file) ? ASSETS[file] : undefined;
      if (!type) throw new NotFoundError(`No asset ${file}.`);
      ctx.type = type;
      ctx.body = await asset(file);
    },
  ),
];

export function openApiRoutes(urls: { publicBase: string; gateway: string }): Router<AppState> {
  const deps = { servers: { baseUrl: urls.publicBase, gatewayUrl: urls.gateway }, csp: referenceCsp(urls.gateway) };
  // Strict: `/docs/` is not the reference (home.page.ts's `/docs/{file}` answers 404 for it).
  return mountRoutes(deps, REFERENCE_ROUTES, { strict: true });
}
