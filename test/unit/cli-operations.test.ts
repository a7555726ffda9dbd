// The CLI's operations (cli/operations.ts) are operations of the published OpenAPI document: each under its
// operationId, method and path template, on the plane that serves it; and no command sends a path of its own.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../api/openapi/document.js';
import { expandPath, METHODS, type Operation } from '../../cli/client.js';
import { OPERATIONS, proxyOperation } from '../../cli/operations.js';
import { ROOT } from '../helpers/env.js';

const doc = buildOpenApiDocument() as {
  paths: Record<string, Record<string, { operationId?: string }> & { servers?: { url: string }[] }>;
};

/** What the document says of an operation's method and path: its operationId and the plane that serves it. */
function documented(op: Operation): { operationId?: string; plane: string } | undefined {
  const item = doc.paths[op.path];
  const entry = item?.[op.method.toLowerCase()];
  if (!item || !entry) return undefined;
  return { operationId: entry.operationId, plane: item.servers?.[0]?.url === '{gateway_url}' ? 'gateway' : 'control' };
}

describe('the CLI operations', () => {
  it.each(Object.entries(OPERATIONS))('%s is that operation of the OpenAPI document', (operationId, op) => {
    expect(documented(op), `${op.method} ${op.path}`).toEqual({ operationId, plane: op.plane });
  });

  it.each(METHODS)('svc call %s is the gateway proxy operation of that method', (method) => {
    const op = proxyOperation(method);
    const id = `proxy${method[0]}${method.slice(1).toLowerCase()}`;
    expect(documented(op), `${op.method} ${op.path}`).toEqual({ operationId: id, plane: 'gateway' });
  });

  it('fills a path template: one encoded segment per parameter, the gateway path as given', () => {
    expect(expandPath(OPERATIONS.patchKey, { id: 'key_1/..?x' })).toBe('/v1/keys/key_1%2F..%3Fx');
    expect(expandPath(proxyOperation('GET'), { apiSlug: 'a b', path: 'forecast/paris' })).toBe(
      '/v1/proxy/a%20b/forecast/paris',
    );
    expect(() => expandPath(OPERATIONS.getListing, {})).toThrow('no value for {slug}');
  });

  it('no CLI file but cli/operations.ts names an API path', () => {
    const dir = path.join(ROOT, 'cli');
    const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    const literal = /[`'"]\/v1\//;
    const offenders = files.filter(
      (f) => f !== 'operations.ts' && literal.test(readFileSync(path.join(dir, f), 'utf8')),
    );
    expect(offenders).toEqual([]);
  });
});
