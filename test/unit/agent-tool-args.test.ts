// An installed tool's arguments to its request (core/agent-tools/tool-args.ts) and the did-you-mean of unknown
// arguments (core/agent-tools/did-you-mean.ts): flat and grouped forms, both at once refused, unknown names answered
// with the name meant, and the schema checked before anything is sent.
import { describe, expect, it } from 'vitest';
import { closestName, editDistance } from '../../core/agent-tools/did-you-mean.js';
import { toolRequest } from '../../core/agent-tools/tool-args.js';
import { toolInputSchema } from '../../core/agent-tools/tool-shape.js';
import { ValidationError } from '../../core/errors.js';

const refusal = (fn: () => unknown): ValidationError => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError);
    return err as ValidationError;
  }
  throw new Error('expected a validation_failed refusal');
};

const ITEMS = toolInputSchema({
  method: 'PATCH',
  path: '/items/{id}',
  inputSchema: {
    type: 'object',
    properties: {
      query: { type: 'object', properties: { id: { type: 'string' }, dry_run: { type: 'boolean' } } },
      body: {
        type: 'object',
        properties: { qty: { type: 'integer', minimum: 1 }, note: { type: 'string' } },
        required: ['qty'],
      },
    },
    required: ['body'],
  },
});
const OPEN = toolInputSchema({ method: 'POST', path: '/things/{id}' });

describe('did you mean', () => {
  it('measures edits and finds the closest name, or none', () => {
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('qyt', 'qty')).toBe(1);
    expect(closestName('q', ['slug', 'query', 'idempotency_key'])).toBe('query');
    expect(closestName('maxResults', ['query', 'max_results'])).toBe('max_results');
    expect(closestName('slg', ['slug', 'query'])).toBe('slug');
    expect(closestName('idempotencykey', ['idempotency_key'])).toBe('idempotency_key');
    expect(closestName('zzzz', ['slug', 'query'])).toBeUndefined();
  });
});

describe('installed tool arguments', () => {
  it('flat: each argument goes to its place; prefixed names find their parameter', () => {
    expect(toolRequest(ITEMS, { path_id: 'a/b', query_id: 'q', dry_run: true, qty: 2, idempotency_key: 'k' })).toEqual({
      path: { id: 'a/b' },
      query: { id: 'q', dry_run: true },
      body: { qty: 2 },
      idempotency_key: 'k',
    });
    expect(toolRequest(OPEN, { id: '7', query: { q: 'x', tag: ['a', 'b'] }, body: [1, 2] })).toEqual({
      path: { id: '7' },
      query: { q: 'x', tag: ['a', 'b'] },
      body: [1, 2],
    });
  });

  it('grouped: the form of before is still accepted and checked', () => {
    expect(toolRequest(ITEMS, { path: { id: '1' }, query: { dry_run: false }, body: { qty: 1 } })).toEqual({
      path: { id: '1' },
      query: { dry_run: false },
      body: { qty: 1 },
    });
    const bad = refusal(() => toolRequest(ITEMS, { path: { id: '1' }, body: { qty: 0 } }));
    expect(bad.details?.issues).toEqual([{ path: 'body.qty', message: 'must be >= 1' }]);
    // For an open endpoint, `query` and `body` are the same in both forms; `path` makes it grouped.
    expect(toolRequest(OPEN, { path: { id: '7' }, body: { a: 1 } })).toEqual({ path: { id: '7' }, body: { a: 1 } });
  });

  it('refuses both forms at once, naming the keys of each', () => {
    const both = refusal(() => toolRequest(ITEMS, { path_id: '1', qty: 1, body: { qty: 1 } }));
    expect(both.message).toMatch(
      /^Send either flat arguments \(here `path_id`, `qty`\) or the grouped form \(here `body`\)/,
    );
    expect(both.details).toMatchObject({ flat_arguments: ['path_id', 'qty'], grouped_arguments: ['body'] });
  });

  it('refuses an unknown argument with the one meant, and a bad value with its place', () => {
    const q = refusal(() => toolRequest(OPEN, { id: '1', q: 'x' }));
    expect(q.message).toContain('Unknown argument `q`: did you mean `query`?');
    expect(q.details).toMatchObject({ unknown: ['q'], suggestions: { q: 'query' } });
    expect(q.details?.expected).toEqual(['id', 'query', 'body', 'idempotency_key']);
    const qt = refusal(() => toolRequest(ITEMS, { path_id: '1', qyt: 1 }));
    expect(qt.message).toContain('did you mean `qty`?');
    const missing = refusal(() => toolRequest(ITEMS, { qty: 1 }));
    expect(missing.details?.issues).toEqual([
      { path: '(arguments)', message: "must have required property 'path_id'" },
    ]);
    const wrong = refusal(() => toolRequest(OPEN, { id: '1', query: { a: { nested: true } } }));
    expect(JSON.stringify(wrong.details?.issues)).toContain('query.a');
  });
});
