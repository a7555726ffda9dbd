// A listing page's snippets (issue 31, api/pages/storefront/snippets.ts): example path values and a sample body from
// the input schema, and shell words that bash reads back exactly (a `'` in a sample included): checked by running the
// curl and svc snippets under bash with `curl` and `npx` replaced by a function that prints its arguments.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { examplePath, sampleValue, shellQuote, snippetsFor } from '../../api/pages/storefront/snippets.js';

const target = {
  slug: 'fjord-forecasts',
  gatewayBase: 'http://127.0.0.1:3001/v1/proxy/fjord-forecasts',
  gateway: 'http://127.0.0.1:3001',
  mcp: 'http://127.0.0.1:3002',
};

/** The arguments bash passes to `command` when it runs `snippet`, one per line. */
function argsOf(snippet: string, command: string): string[] {
  const out = execFileSync('bash', ['-c', `${command}() { printf '%s\\n' "$@"; }\n${snippet}`], {
    env: { PATH: process.env.PATH, SVC_API_KEY: 'svc_live_test' },
    encoding: 'utf8',
  });
  return out.trimEnd().split('\n');
}

describe('storefront snippets', () => {
  it('fills path parameters and required query parameters from the schema, by type otherwise', () => {
    const e = {
      method: 'GET',
      path: '/forecast/{city}/{day}',
      input_schema: {
        type: 'object',
        properties: {
          path: {
            type: 'object',
            properties: { city: { type: 'string', example: 'Bergen Sentrum' }, day: { type: 'integer' } },
          },
          query: {
            type: 'object',
            properties: { days: { type: 'integer', default: 3 }, lang: { type: 'string' } },
            required: ['lang'],
          },
        },
      },
    };
    expect(examplePath(e)).toBe('/forecast/Bergen%20Sentrum/1');
    const s = snippetsFor(target, e);
    expect(s.path).toBe('/forecast/Bergen%20Sentrum/1?days=3&lang=example');
    expect(argsOf(s.curl, 'curl')).toEqual([
      '-sS',
      `${target.gatewayBase}/forecast/Bergen%20Sentrum/1?days=3&lang=example`,
      '-H',
      'Authorization: Bearer svc_live_test',
    ]);
  });

  it('sends a sample JSON body that survives the shell, quotes and all', () => {
    const e = {
      method: 'POST',
      path: '/alerts',
      input_schema: {
        type: 'object',
        properties: {
          body: {
            type: 'object',
            properties: {
              email: { type: 'string', format: 'email' },
              fjord: { type: 'string', example: "Sogn's fjord" },
              levels: { type: 'array', items: { enum: ['storm', 'gale'] } },
              quiet: { type: 'boolean' },
            },
          },
        },
      },
    };
    const body = { email: 'person@example.com', fjord: "Sogn's fjord", levels: ['storm'], quiet: true };
    const s = snippetsFor(target, e);
    const curl = argsOf(s.curl, 'curl');
    expect(curl.slice(0, 3)).toEqual(['-sS', '-X', 'POST']);
    expect(JSON.parse(curl[curl.indexOf('-d') + 1]!)).toEqual(body);
    expect(curl).toContain('Content-Type: application/json');
    const svc = argsOf(s.svc, 'npx');
    expect(svc.slice(0, 7)).toEqual([
      'svc',
      '--gateway-url',
      target.gateway,
      'call',
      'fjord-forecasts',
      'POST',
      '/alerts',
    ]);
    expect(JSON.parse(svc[svc.indexOf('-d') + 1]!)).toEqual(body);
    expect(s.fetch).toContain('Authorization: `Bearer ${process.env.SVC_API_KEY}`');
    expect(s.fetch).toContain("method: 'POST'");
    expect(s.mcp).toContain('"add_api_tools"');
    expect(s.mcp).toContain(`${target.mcp}/mcp`);
  });

  it('a schema-less POST sends {}; a schema that is not in groups is the body (the query for GET)', () => {
    expect(argsOf(snippetsFor(target, { method: 'POST', path: '/x', input_schema: null }).curl, 'curl')).toContain(
      '{}',
    );
    const plain = { type: 'object', properties: { q: { type: 'string', example: 'rain' } }, required: ['q'] };
    expect(snippetsFor(target, { method: 'GET', path: '/s', input_schema: plain }).path).toBe('/s?q=rain');
    const post = argsOf(snippetsFor(target, { method: 'PUT', path: '/s', input_schema: plain }).curl, 'curl');
    expect(JSON.parse(post[post.indexOf('-d') + 1]!)).toEqual({ q: 'rain' });
  });

  it('samples by example, default, const, enum, then type', () => {
    expect(sampleValue({ type: 'string', example: 'x', default: 'y' })).toBe('x');
    expect(sampleValue({ type: 'string', default: 'y' })).toBe('y');
    expect(sampleValue({ enum: [7, 8] })).toBe(7);
    expect(sampleValue({ type: 'integer', minimum: 5 })).toBe(5);
    expect(sampleValue({ type: ['null', 'number'] })).toBe(1);
    expect(sampleValue({ type: 'string', format: 'date' })).toBe('2026-01-01');
    expect(sampleValue({ oneOf: [{ type: 'boolean' }, { type: 'string' }] })).toBe(true);
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
  });
});
