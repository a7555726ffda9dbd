// The compaction behind tools/list (mcp/tool-listing.ts): what says nothing to a client goes, every real rule stays.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compactJsonSchema, looseOutput } from '../../mcp/tool-listing.js';

describe('compactJsonSchema', () => {
  it('drops $schema, safe-integer bounds, empty additionalProperties, string propertyNames, format regexes', () => {
    const json = z.toJSONSchema(
      z.object({
        n: z.number().int(),
        cents: z.number().int().min(0).max(100),
        at: z.iso.datetime(),
        meta: z.looseObject({ tags: z.record(z.string(), z.unknown()) }),
      }),
      { target: 'draft-7' },
    );
    expect(compactJsonSchema(json)).toEqual({
      type: 'object',
      properties: {
        n: { type: 'integer' },
        cents: { type: 'integer', minimum: 0, maximum: 100 },
        at: { type: 'string', format: 'date-time' },
        meta: { type: 'object', properties: { tags: { type: 'object' } }, required: ['tags'] },
      },
      required: ['n', 'cents', 'at', 'meta'],
      additionalProperties: false,
    });
  });

  it('writes a nullable as a type list, and leaves other unions and property names alone', () => {
    const json = z.toJSONSchema(
      z.strictObject({
        note: z.string().max(5).nullable().describe('A note.'),
        either: z.union([z.string(), z.number()]),
        choice: z.enum(['a', 'b']).nullable(),
        $schema: z.string().optional(), // a property named like a keyword is a name, not a keyword
      }),
      { target: 'draft-7' },
    );
    const compact = compactJsonSchema(json) as { properties: Record<string, unknown> };
    const original = (json as { properties: Record<string, object> }).properties;
    expect(compact.properties.note).toEqual({ description: 'A note.', type: ['string', 'null'], maxLength: 5 });
    expect(compact.properties.either).toEqual(original.either);
    expect(compact.properties.choice).toEqual(original.choice);
    expect(compact.properties.$schema).toEqual({ type: 'string' });
  });

  it('drops a cents cap of 10^12 or more, keeps smaller ones', () => {
    const json = z.toJSONSchema(
      z.object({ huge: z.number().int().min(0).max(1e12), real: z.number().int().max(999_999_999_999) }),
      { target: 'draft-7' },
    );
    expect((compactJsonSchema(json) as { properties: object }).properties).toEqual({
      huge: { type: 'integer', minimum: 0 },
      real: { type: 'integer', maximum: 999_999_999_999 },
    });
  });
});

describe('looseOutput', () => {
  it('lets fields added later through, and writes a const without its type', () => {
    const json = compactJsonSchema(
      z.toJSONSchema(z.object({ ok: z.literal(false), inner: z.object({ a: z.string() }) }), { target: 'draft-7' }),
    );
    expect(looseOutput(json)).toEqual({
      type: 'object',
      properties: {
        ok: { const: false },
        inner: { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] },
      },
      required: ['ok', 'inner'],
    });
  });
});
