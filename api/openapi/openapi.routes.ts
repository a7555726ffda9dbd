/**
 * `GET /v1/openapi.json`: the OpenAPI 3.1.0 document (api/openapi/document.ts), raw JSON without the envelope,
 * built once per process. `GET /docs`: the browsable reference (swagger-ui-dist, served from our own copy of its
 * assets under `/docs/assets/{file}`, a fixed list: no path from the request reaches the file system). The page's
 * CSP allows `script-src 'self'` for this page only; the init script is ours (no inline script).
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import Router from '@koa/router';
import { NotFoundError } from '../../core/errors.js';
import type { AppState } from '../context.js';
import { openApiDocument } from './document.js';

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

export function openApiRoutes(urls: { publicBase: string; gateway: string }): Router<AppState> {
  const servers = { baseUrl: urls.publicBase, gatewayUrl: urls.gateway };
  const csp = referenceCsp(urls.gateway);
  // Strict: `/docs/` is not the reference (home.page.ts's `/docs/{file}` answers 404 for it).
  const router = new Router<AppState>({ strict: true });

  router.get('/v1/openapi.json', (ctx) => {
    ctx.type = 'application/json; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = openApiDocument(servers).text;
  });

  router.get('/docs', (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Content-Security-Policy', csp);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.body = REFERENCE_PAGE;
  });

  router.get('/docs/assets/:file', async (ctx) => {
    const file = ctx.params.file ?? '';
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
  });

  return router;
}
