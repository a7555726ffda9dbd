// The upstream URL of a proxied call (gateway/upstream-path.ts): exactly the base URL's path followed by the request's
// path and query, or refused. The traversal rule runs first (test/integration/gateway/path-traversal.test.ts covers it over HTTP); this is the
// second check behind it, so a path the rule let through can still never be normalised or re-encoded elsewhere.
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../core/errors.js';
import { upstreamUrl } from '../../gateway/upstream-path.js';

describe('upstreamUrl', () => {
  it('keeps the path exactly as the template expanded it, under the base URL’s path', () => {
    for (const path of ['/items/42', '/items/a.b', '/items/..a', '/items/%2e%2e%2e', '/items/caf%C3%A9', '/x%20y']) {
      const url = upstreamUrl('http://upstream.test:8080', '/api/v2', path, '?q=..%2f');
      expect(url.pathname).toBe(`/api/v2${path}`);
      expect(url.origin).toBe('http://upstream.test:8080');
      expect(url.search).toBe('?q=..%2f');
    }
    expect(upstreamUrl('https://h.test', '', '/a', '').href).toBe('https://h.test/a');
  });

  it('refuses, with 400 unsafe_path, any path URL parsing would change (dot segments, backslashes, re-encoding)', () => {
    for (const path of [
      '/items/..',
      '/items/../../admin',
      '/items/.',
      '/items/%2e%2e',
      '/a\\..\\b',
      '/a b',
      '/a"b',
      '/a<b>',
    ]) {
      let thrown: unknown;
      try {
        upstreamUrl('http://upstream.test', '/api/v2', path, '');
      } catch (err) {
        thrown = err;
      }
      expect(thrown, path).toBeInstanceOf(ValidationError);
      expect((thrown as ValidationError).details, path).toMatchObject({ reason: 'unsafe_path' });
    }
  });

  it('refuses a path that would move the request to another origin', () => {
    expect(() => upstreamUrl('http://upstream.test', '', '@evil.test/x', '')).toThrow(ValidationError);
  });
});
