/**
 * The OpenAPI 3.1 description of a demo API (served by the demo upstream at `{base}/openapi.json`; the demo's
 * listings are imported from it through the ordinary import path, core/providers/openapi-import.ts).
 */
import type { DemoApi, JsonSchema } from './demo-apis.js';

const ERROR = {
  description: 'The request could not be served (the message says why).',
  content: {
    'application/json': {
      schema: {
        type: 'object',
        properties: { error: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] } },
        required: ['error'],
      },
    },
  },
};

export function demoOpenApi(api: DemoApi, serverUrl: string): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const e of api.endpoints) {
    const operation: Record<string, unknown> = {
      operationId: e.operationId,
      summary: e.summary,
      description: e.priceCents === 0 ? 'Free.' : `${e.priceCents} cent${e.priceCents === 1 ? '' : 's'} per call.`,
      ...(e.parameters ? { parameters: e.parameters } : {}),
      ...(e.body ? { requestBody: { required: true, content: { 'application/json': { schema: e.body } } } } : {}),
      responses: {
        '200': { description: 'OK', content: { 'application/json': { schema: e.response } } },
        '400': ERROR,
        ...(e.path.includes('{') ? { '404': ERROR } : {}),
      },
    };
    (paths[e.path] ??= {})[e.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: api.name,
      version: '1.0.0',
      summary: api.summary,
      description: api.description,
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: serverUrl }],
    paths,
  };
}
