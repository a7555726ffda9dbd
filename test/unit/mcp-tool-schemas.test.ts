// The provider tools' shared pieces: output schemas that also admit the error result (the SDK client checks an
// error result's structured content against the tool's output schema too), REST-schema argument checks, and the
// lifecycle answer REST and the tools share.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AppError } from '../../core/errors.js';
import { lifecycleView } from '../../core/providers/lifecycle.service.js';
import { UpdateApiBody } from '../../core/providers/providers.schemas.js';
import { dataOrError, parseArgs } from '../../mcp/tools/tool-schemas.js';

describe('dataOrError', () => {
  const schema = dataOrError({ api_id: z.string(), note: z.string().nullable(), count: z.number().int().optional() });

  it('checks a success against the full shape, extra fields allowed', () => {
    expect(schema.safeParse({ api_id: 'api_1', note: null, extra: 1 }).success).toBe(true);
    expect(schema.safeParse({ note: null }).success).toBe(false);
    expect(schema.safeParse({ api_id: 1, note: null }).success).toBe(false);
  });

  it('admits the error result and says so in the JSON schema clients validate with', () => {
    expect(schema.safeParse({ ok: false, error: { code: 'forbidden', message: 'no' } }).success).toBe(true);
    const json = z.toJSONSchema(schema, { io: 'output' }) as Record<string, unknown>;
    expect(json.type).toBe('object');
    expect(json.anyOf).toEqual([{ required: ['api_id', 'note'] }, { required: ['ok', 'error'] }]);
  });
});

describe('parseArgs', () => {
  it('answers 400 validation_failed with the REST issues, paths prefixed', () => {
    let caught: unknown;
    try {
      parseArgs(UpdateApiBody, { tags: 'x' }, 'body');
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(AppError);
    const e = caught as AppError;
    expect([e.status, e.code]).toEqual([400, 'validation_failed']);
    expect(e.details).toEqual({ issues: [{ path: 'body.tags', message: expect.any(String) }] });
    expect(parseArgs(UpdateApiBody, { tags: ['A', 'a'] })).toEqual({ tags: ['a'] });
  });
});

describe('lifecycleView', () => {
  it('is the finished result, or the running workflow', () => {
    expect(
      lifecycleView('api_1', { done: true, result: { action: 'publish', status: 'live', verification: null } }),
    ).toEqual({
      api_id: 'api_1',
      action: 'publish',
      status: 'live',
      message: 'Published: the API is live.',
      verification: null,
    });
    expect(
      lifecycleView('api_1', { done: false, workflow_id: 'publish:api_1', run_id: 'r', status: 'running' }),
    ).toEqual({
      api_id: 'api_1',
      done: false,
      workflow_id: 'publish:api_1',
      run_id: 'r',
      status: 'running',
    });
  });
});
