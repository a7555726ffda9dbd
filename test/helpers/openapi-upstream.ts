/** An upstream that publishes the weather OpenAPI 3.1 fixture, for the tests that import endpoints from a URL. */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { ROOT } from './env.js';
import { startUpstream, type Upstream, type UpstreamHandler } from './upstream.js';

export const WEATHER_OPENAPI = path.join(ROOT, 'test', 'fixtures', 'openapi', 'weather-3.1.json');

/** Serves the fixture at /openapi.json; every other request goes to `otherwise`. */
export async function startOpenApiUpstream(otherwise: UpstreamHandler): Promise<Upstream> {
  const doc = await readFile(WEATHER_OPENAPI, 'utf8');
  return startUpstream((req, res, body) => {
    if (req.url === '/openapi.json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(doc);
      return;
    }
    return otherwise(req, res, body);
  });
}
