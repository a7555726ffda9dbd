// The console's endpoint editor (issue 31): parameter rows ↔ input_schema in the OpenAPI import's shape
// (api/pages/console/provider-params.ts), read the same way by the installed agent tools (core/agent-tools), and the
// JSON Schema textareas checked as JSON (line and column from 1) and by Ajv as a JSON Schema (provider-json.ts).
import { describe, expect, it } from 'vitest';
import { toolInputSchema } from '../../core/agent-tools/tool-shape.js';
import { FormError } from '../../api/pages/form-errors.js';
import { lineColumn, parseJsonField, readJsonSchema } from '../../api/pages/console/provider-json.js';
import { exampleCall, rowsFromSchema, schemaFromRows, type ParamRow } from '../../api/pages/console/provider-params.js';

const row = (r: Partial<ParamRow> & Pick<ParamRow, 'name' | 'in'>): ParamRow => ({
  type: 'string',
  required: false,
  description: '',
  example: '',
  ...r,
});

/** The fields of the FormError `fn` throws. */
function refusal(fn: () => unknown): Record<string, string> {
  try {
    fn();
  } catch (err) {
    if (err instanceof FormError) return err.fields;
    throw err;
  }
  throw new Error('not refused');
}

describe('parameter rows → input_schema', () => {
  it('make the import shape: groups by place, path parameters required, required places listed', () => {
    const rows = [
      row({ name: 'id', in: 'path', type: 'integer', example: '7' }),
      row({ name: 'q', in: 'query', description: 'Search words', required: true }),
      row({ name: 'tags', in: 'body', type: 'array', example: '["a"]' }),
      row({ name: '', in: 'query' }), // blank: skipped
    ];
    expect(schemaFromRows(rows, '/items/{id}/{lang}')).toEqual({
      type: 'object',
      properties: {
        path: {
          type: 'object',
          properties: { id: { type: 'integer', example: 7 }, lang: { type: 'string' } },
          required: ['id', 'lang'],
        },
        query: {
          type: 'object',
          properties: { q: { type: 'string', description: 'Search words' } },
          required: ['q'],
        },
        body: { type: 'object', properties: { tags: { type: 'array', example: ['a'] } } },
      },
      required: ['path', 'query'],
    });
    expect(schemaFromRows([], '/plain')).toBeNull();
  });

  it('refuse every bad row at once, each beside its field', () => {
    const fields = refusal(() =>
      schemaFromRows(
        [
          row({ name: 'n', in: 'query', type: 'number', example: 'lots' }),
          row({ name: 'city', in: 'path' }),
          row({ name: 'n', in: 'query' }),
          row({ name: '', in: 'query', description: 'orphan' }),
          row({ name: 'b', in: 'body', type: 'object', example: '[1]' }),
          row({ name: 'j', in: 'body', type: 'object', example: '{"a": }' }),
          row({ name: 'ok', in: 'query', type: 'boolean', example: 'maybe' }),
        ],
        '/x',
      ),
    );
    expect(fields).toEqual({
      'p0-example': 'Parameter 1 (n), example: enter a number, like 2.5.',
      'p1-in': 'Parameter 2 (city), place: the path has no {city}: add it to the path, or choose query or body.',
      'p2-name': 'Parameter 3, name: n is already a query parameter above.',
      'p3-name': 'Parameter 4, name: give the parameter a name, or clear its row.',
      'p4-example': 'Parameter 5 (b), example: enter a JSON object, like {"key": "value"}.',
      'p5-example':
        'Parameter 6 (j), example: not valid JSON at line 1, column 7: unexpected “}” (a value must be "text", a number, true, false, null, {…} or […]).',
      'p6-example': 'Parameter 7 (ok), example: enter true or false.',
    });
  });

  it('read back from a schema only when the rows say exactly the same', () => {
    const rows = [
      row({ name: 'city', in: 'path', required: true, example: 'Oslo', description: 'City' }),
      row({ name: 'days', in: 'query', type: 'integer', example: '3' }),
    ];
    const schema = schemaFromRows(rows, '/f/{city}')!;
    expect(rowsFromSchema(schema, '/f/{city}')).toEqual(rows);
    expect(rowsFromSchema(null, '/f')).toEqual([]);
    // A format, a header parameter or a non-object body is more than the rows say: edited as JSON.
    const withFormat = structuredClone(schema) as { properties: { query: { properties: Record<string, object> } } };
    withFormat.properties.query.properties.days = { type: 'integer', format: 'int32' };
    expect(rowsFromSchema(withFormat, '/f/{city}')).toBeNull();
    expect(
      rowsFromSchema({ type: 'object', properties: { header: { type: 'object', properties: {} } } }, '/f'),
    ).toBeNull();
    expect(rowsFromSchema({ type: 'object', properties: { body: { type: 'array' } } }, '/f')).toBeNull();
  });

  it('give the installed agent tool flat arguments, like an imported schema', () => {
    const schema = schemaFromRows(
      [row({ name: 'harbour', in: 'query', required: true, example: 'Bergen' }), row({ name: 'text', in: 'body' })],
      '/v1/forecast/{day}',
    );
    const shape = toolInputSchema({ method: 'POST', path: '/v1/forecast/{day}', inputSchema: schema });
    expect(shape.args).toEqual([
      { name: 'day', in: 'path', param: 'day' },
      { name: 'harbour', in: 'query', param: 'harbour' },
      { name: 'text', in: 'body', param: 'text' },
    ]);
    expect(shape.schema.required).toEqual(expect.arrayContaining(['day', 'harbour']));
  });

  it('make an example call from the examples', () => {
    const schema = schemaFromRows(
      [
        row({ name: 'city', in: 'path', example: 'São Paulo' }),
        row({ name: 'units', in: 'query', example: 'metric' }),
        row({ name: 'n', in: 'body', type: 'integer', example: '2' }),
      ],
      '/f/{city}',
    );
    expect(exampleCall('POST', '/f/{city}', schema)).toEqual({
      line: 'POST /f/S%C3%A3o%20Paulo?units=metric',
      body: '{\n  "n": 2\n}',
    });
  });
});

describe('JSON Schema textareas', () => {
  const field = { id: 'ep-input_schema', label: 'Input JSON Schema' };

  it('name the line and column of a JSON syntax error, counted from 1', () => {
    expect(lineColumn('ab\ncd', 4)).toBe('line 2, column 2');
    const cases: [string, string][] = [
      ['{\n  "a": 1,\n}', 'line 3, column 1: a comma before “}” (JSON allows no trailing comma)'],
      ['{"a": 1', 'line 1, column 8: expected “,” or “}” before the end'],
      ["{'a': 1}", 'line 1, column 2: expected a property name in double quotes'],
      ['{"a": "x\ny"}', 'line 1, column 9: a line break or control character inside a string (write \\n)'],
      ['[1 2]', 'line 1, column 4: expected “,” or “]”'],
      ['{} x', 'line 1, column 4: unexpected text after the end of the JSON'],
    ];
    for (const [text, where] of cases) {
      expect(refusal(() => parseJsonField(text, field))).toEqual({
        'ep-input_schema': `Input JSON Schema: not valid JSON at ${where}.`,
      });
    }
  });

  it('check a schema with Ajv: its meta-schema, then compiling it; OpenAPI keywords pass', () => {
    expect(readJsonSchema('  ', field)).toBeNull();
    expect(readJsonSchema('{"type":"object","properties":{"a":{"type":"string","example":"x"}}}', field)).toEqual({
      type: 'object',
      properties: { a: { type: 'string', example: 'x' } },
    });
    const draft7 = '{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"a":{"type":"string"}}}';
    expect(readJsonSchema(draft7, field)).toMatchObject({ definitions: { a: { type: 'string' } } });
    expect(refusal(() => readJsonSchema('[1]', field))['ep-input_schema']).toContain('a JSON Schema here is an object');
    expect(refusal(() => readJsonSchema('{"properties":{"a":{"type":"strng"}}}', field))['ep-input_schema']).toContain(
      'not a valid JSON Schema at properties › a › type: must be equal to one of the allowed values',
    );
    expect(refusal(() => readJsonSchema('{"$ref":"#/$defs/Nope"}', field))['ep-input_schema']).toContain(
      'not a usable JSON Schema',
    );
    expect(refusal(() => readJsonSchema('{"$schema":"http://example.com/mine"}', field))['ep-input_schema']).toContain(
      '“$schema” must be',
    );
  });
});
