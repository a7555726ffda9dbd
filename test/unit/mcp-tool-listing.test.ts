// The compaction behind tools/list (mcp/tool-listing.ts): what says nothing to a client goes, every real rule stays.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compactJsonSchema } from '../../mcp/tool-listing.js';

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
});
