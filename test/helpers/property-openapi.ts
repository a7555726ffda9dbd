/**
 * Generated OpenAPI documents for the import property (test/integration/providers/property-openapi-import.test.ts): valid-ish
 * 3.0/3.1 documents (paths, operations, parameters, bodies, responses, component schemas with $refs between them,
 * cycles included) and the ways such a document goes wrong — missing or mistyped fields, unknown or absent versions,
 * dangling, external and malformed $refs, odd unicode, very deep or very wide structures, more operations than the
 * importer takes — served as a parsed object, JSON text or YAML text (or plain garbage text).
 */
import fc from 'fast-check';
import { dump as dumpYaml } from 'js-yaml';

const COMPONENTS = ['A', 'B', 'C', 'Pet', 'Ünïcødé'];

/** Short strings with a fair share of odd unicode (combining marks, RTL, astral, NUL, lone surrogates). */
export const oddString = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'grapheme', maxLength: 8 }),
  fc.string({ unit: 'binary', maxLength: 8 }),
  fc.constantFrom('', ' ', '\u0000', '\u202e', 'e\u0301', '\ud800', '😀', '{}', '$ref', '__proto__', 'constructor'),
);

const ref = fc.oneof(
  { arbitrary: fc.constantFrom(...COMPONENTS).map((n) => `#/components/schemas/${n}`), weight: 6 },
  {
    arbitrary: fc.constantFrom(
      '#/components/schemas/Missing',
      '#/',
      '#',
      '',
      '#/paths',
      '#/components/schemas/A/properties/x',
      'http://127.0.0.1:9/other.json#/A',
      'other.yaml#/A',
      '#/components/schemas/%41',
      '#/components/schemas/A~1B',
    ),
    weight: 1,
  },
  { arbitrary: oddString.map((s) => `#/${s}`), weight: 1 },
);

/** JSON Schemas, some of them referring to the components (and so, through them, to themselves). */
export const schema: fc.Arbitrary<unknown> = fc.letrec<{ s: unknown }>((tie) => ({
  s: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record(
      { type: fc.constantFrom('string', 'integer', 'number', 'boolean', 'null', 'object', 'array', 'bogus', 7) },
      { requiredKeys: [] },
    ),
    fc.record({ $ref: ref }),
    fc.record(
      {
        type: fc.constant('object'),
        properties: fc.dictionary(oddString, tie('s'), { maxKeys: 4 }),
        required: fc.array(oddString, { maxLength: 3 }),
        additionalProperties: fc.oneof(fc.boolean(), tie('s')),
      },
      { requiredKeys: ['type'] },
    ),
    fc.record({ type: fc.constant('array'), items: tie('s') }, { requiredKeys: [] }),
    fc.record({ oneOf: fc.array(tie('s'), { maxLength: 3 }) }),
    fc.record({ allOf: fc.array(tie('s'), { maxLength: 3 }) }),
    fc.record({ enum: fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 4 }) }),
    fc.jsonValue({ maxDepth: 2 }),
  ),
})).s;

const parameter = fc.record(
  {
    name: oddString,
    in: fc.constantFrom('path', 'query', 'header', 'cookie', 'body', 'nowhere'),
    required: fc.oneof(fc.boolean(), fc.constant('yes')),
    schema,
    $ref: fc.constantFrom('#/components/parameters/P', '#/components/parameters/Nope'),
  },
  { requiredKeys: ['name', 'in'] },
);

const content = fc.dictionary(
  fc.constantFrom('application/json', 'application/problem+json', 'text/plain', '*/*', 'bogus'),
  fc.record({ schema }, { requiredKeys: [] }),
  { maxKeys: 2 },
);

const operation = fc.record(
  {
    operationId: oddString,
    summary: fc.oneof(oddString, fc.string({ minLength: 190, maxLength: 400 }), fc.integer()),
    description: oddString,
    parameters: fc.oneof(fc.array(parameter, { maxLength: 4 }), fc.constant('not an array')),
    requestBody: fc.oneof(
      fc.record({ content, required: fc.boolean() }, { requiredKeys: [] }),
      fc.record({ $ref: fc.constantFrom('#/components/requestBodies/R', '#/components/requestBodies/Nope') }),
    ),
    responses: fc.dictionary(
      fc.constantFrom('200', '201', '204', '2XX', '3XX', 'default', '404', '999', 'abc'),
      fc.oneof(
        fc.record({ description: oddString, content }, { requiredKeys: [] }),
        fc.record({ $ref: fc.constantFrom('#/components/responses/Ok', '#/components/responses/Nope') }),
      ),
      { maxKeys: 3 },
    ),
  },
  { requiredKeys: ['responses'] },
);

const method = fc.constantFrom('get', 'post', 'put', 'patch', 'delete', 'head', 'options', 'trace', 'GET', 'fetch');

const pathKey = fc.oneof(
  fc.constantFrom('/', '/items', '/items/{id}', '/a/{b}/c/{d}', '/{x}{y}', '/items/{}', 'no-slash', '/ü/{ñ}'),
  fc
    .array(fc.oneof(fc.stringMatching(/^[a-z]{1,6}$/), oddString), { minLength: 1, maxLength: 3 })
    .map((parts) => `/${parts.join('/')}`),
);

const pathItem = fc.oneof(
  { arbitrary: fc.dictionary(method, operation, { minKeys: 1, maxKeys: 3 }), weight: 8 },
  { arbitrary: fc.record({ $ref: fc.constantFrom('#/paths/~1items', '#/nope') }), weight: 1 },
  { arbitrary: fc.jsonValue({ maxDepth: 2 }), weight: 1 },
);

const version = fc.oneof(
  { arbitrary: fc.constantFrom('3.0.0', '3.0.3', '3.1.0', '3.1.1'), weight: 8 },
  { arbitrary: fc.constantFrom('2.0', '3.2.0', '4.0.0', '3.1', '3', '', '3.0.0-rc1', 'v3.1.0'), weight: 1 },
  { arbitrary: fc.oneof(fc.integer(), fc.double(), fc.constant(null), fc.constant(3.1)), weight: 1 },
);

/** A document that may well be valid: the shape of a real one, with random content. */
export const validishDocument = fc.record(
  {
    openapi: version,
    info: fc.oneof(
      { arbitrary: fc.record({ title: oddString, version: oddString, description: oddString }), weight: 8 },
      { arbitrary: fc.jsonValue({ maxDepth: 1 }), weight: 1 },
    ),
    servers: fc.array(
      fc.record(
        {
          url: fc.oneof(fc.webUrl(), oddString, fc.constant('https://{region}.example.com/{v}')),
          variables: fc.dictionary(
            fc.constantFrom('region', 'v', 'x'),
            fc.record({ default: oddString, enum: fc.array(oddString, { maxLength: 2 }) }, { requiredKeys: [] }),
            { maxKeys: 2 },
          ),
        },
        { requiredKeys: ['url'] },
      ),
      { maxLength: 2 },
    ),
    paths: fc.dictionary(pathKey, pathItem, { minKeys: 0, maxKeys: 6 }),
    components: fc.record(
      {
        schemas: fc.record(Object.fromEntries(COMPONENTS.map((n) => [n, schema])), { requiredKeys: [] }),
        parameters: fc.record({ P: parameter }, { requiredKeys: [] }),
        requestBodies: fc.record({ R: fc.record({ content }) }, { requiredKeys: [] }),
        responses: fc.record({ Ok: fc.record({ description: oddString, content }) }, { requiredKeys: [] }),
      },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: ['openapi', 'info', 'paths'] },
);

/** Mostly clean text (any unicode grapheme), sometimes odd (NUL, lone surrogates: refused by the input rule). */
const text = fc.oneof(
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }), weight: 9 },
  { arbitrary: oddString, weight: 1 },
);

/** Schemas that are valid JSON Schema, referring only to components that exist (cycles included). */
const validSchema: fc.Arbitrary<unknown> = fc.letrec<{ s: unknown }>((tie) => ({
  s: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record({ type: fc.constantFrom('string', 'integer', 'number', 'boolean') }),
    fc.record({ $ref: fc.constantFrom('A', 'B', 'C').map((n) => `#/components/schemas/${n}`) }),
    fc.record(
      {
        type: fc.constant('object'),
        properties: fc.dictionary(text, tie('s'), { maxKeys: 3 }),
        description: text,
      },
      { requiredKeys: ['type'] },
    ),
    fc.record({ type: fc.constant('array'), items: tie('s') }),
    fc.record({ oneOf: fc.array(tie('s'), { minLength: 1, maxLength: 3 }) }),
  ),
})).s;

const validParameter = fc.oneof(
  fc.record({ name: fc.stringMatching(/^[a-z_]{1,8}$/), in: fc.constantFrom('query', 'header'), schema: validSchema }),
  fc.record({
    name: fc.stringMatching(/^[a-z_]{1,8}$/),
    in: fc.constant('cookie'),
    required: fc.boolean(),
    schema: validSchema,
  }),
);

const validOperation = fc.record(
  {
    operationId: fc.stringMatching(/^[a-zA-Z]{1,10}$/),
    summary: fc.oneof(text, fc.string({ minLength: 190, maxLength: 400 })),
    description: text,
    parameters: fc.uniqueArray(validParameter, { maxLength: 3, selector: (p) => `${p.in}:${p.name}` }),
    requestBody: fc.record({ content: fc.record({ 'application/json': fc.record({ schema: validSchema }) }) }),
    responses: fc.dictionary(
      fc.constantFrom('200', '201', '204', '2XX', 'default', '404'),
      fc.record(
        { description: text, content: fc.record({ 'application/json': fc.record({ schema: validSchema }) }) },
        { requiredKeys: ['description'] },
      ),
      { minKeys: 1, maxKeys: 3 },
    ),
  },
  { requiredKeys: ['responses'] },
);

/** A document the importer should accept (3.0 or 3.1, local $refs only, every path parameter declared). */
export const validDocument = fc
  .record({
    openapi: fc.constantFrom('3.0.0', '3.0.3', '3.1.0', '3.1.1'),
    info: fc.record({ title: text, version: text }),
    paths: fc.dictionary(
      fc.stringMatching(/^(\/[a-z]{1,6}){1,3}$/),
      fc.dictionary(fc.constantFrom('get', 'post', 'put', 'patch', 'delete'), validOperation, {
        minKeys: 1,
        maxKeys: 3,
      }),
      { minKeys: 1, maxKeys: 5 },
    ),
    components: fc.record({ schemas: fc.record({ A: validSchema, B: validSchema, C: validSchema }) }),
  })
  .map((doc) => {
    // A templated path with its parameter declared on every operation.
    doc.paths['/things/{id}'] = {
      get: {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { '200': { description: 'ok' } },
      },
    } as never;
    return doc;
  });

/** Something broken in a valid-ish document: a field dropped, a value swapped for one of another type. */
const broken = fc
  .tuple(validishDocument, fc.array(fc.tuple(fc.nat(), fc.jsonValue({ maxDepth: 1 }), fc.boolean()), { maxLength: 3 }))
  .map(([doc, edits]) => {
    for (const [pick, value, drop] of edits) {
      const nodes: { parent: Record<string, unknown>; key: string }[] = [];
      const walk = (v: unknown, depth: number) => {
        if (depth > 8 || v === null || typeof v !== 'object') return;
        for (const [k, child] of Object.entries(v)) {
          nodes.push({ parent: v as Record<string, unknown>, key: k });
          walk(child, depth + 1);
        }
      };
      walk(doc, 0);
      if (nodes.length === 0) continue;
      const { parent, key } = nodes[pick % nodes.length]!;
      if (drop) delete parent[key];
      else parent[key] = value;
    }
    return doc;
  });

/** A schema nested `depth` levels (arrays of objects of arrays …), the kind of thing that overflows a recursive walk. */
function deepSchema(depth: number): unknown {
  let s: unknown = { type: 'string' };
  for (let i = 0; i < depth; i++) s = i % 2 ? { type: 'array', items: s } : { type: 'object', properties: { n: s } };
  return s;
}

/** Huge or deep documents: deep nesting, many operations (over the import limit), a layered $ref fan-out. */
const huge = fc.oneof(
  fc.integer({ min: 100, max: 1_200 }).map((depth) => ({
    openapi: '3.1.0',
    info: { title: 'deep', version: '1' },
    paths: {
      '/deep': {
        post: {
          requestBody: { content: { 'application/json': { schema: deepSchema(depth) } } },
          responses: { '200': { description: 'ok' } },
        },
      },
    },
  })),
  fc.integer({ min: 400, max: 700 }).map((n) => ({
    openapi: '3.0.3',
    info: { title: 'wide', version: '1' },
    paths: Object.fromEntries(
      Array.from({ length: n }, (_, i) => [`/r${i}`, { get: { responses: { '200': { description: 'ok' } } } }]),
    ),
  })),
  fc.integer({ min: 5, max: 30 }).map((layers) => {
    // Each layer refers to the one below twice: 2^layers copies once inlined (a "$ref bomb").
    const schemas: Record<string, unknown> = { L0: { type: 'string' } };
    for (let i = 1; i <= layers; i++) {
      schemas[`L${i}`] = {
        type: 'object',
        properties: { a: { $ref: `#/components/schemas/L${i - 1}` }, b: { $ref: `#/components/schemas/L${i - 1}` } },
      };
    }
    return {
      openapi: '3.1.0',
      info: { title: 'bomb', version: '1' },
      paths: {
        '/bomb': {
          get: {
            responses: {
              '200': {
                description: 'ok',
                content: { 'application/json': { schema: { $ref: `#/components/schemas/L${layers}` } } },
              },
            },
          },
        },
      },
      components: { schemas },
    };
  }),
  fc.constantFrom('self', 'pair').map((kind) => ({
    openapi: '3.0.3',
    info: { title: 'cycle', version: '1' },
    paths: {
      '/cycle': {
        get: {
          responses: {
            '200': {
              description: 'ok',
              content: { 'application/json': { schema: { $ref: '#/components/schemas/A' } } },
            },
          },
        },
      },
    },
    components: {
      schemas:
        kind === 'self'
          ? { A: { $ref: '#/components/schemas/A' } }
          : { A: { $ref: '#/components/schemas/B' }, B: { $ref: '#/components/schemas/A' } },
    },
  })),
);

/** Text that is not a document at all, or a YAML alias bomb. */
const garbageText = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.constantFrom(
    '',
    '\uFEFF',
    'null',
    '[]',
    '42',
    '"openapi"',
    '{',
    'openapi: [',
    '---\n...\n',
    'a: &a [1,2,3,4,5,6,7,8,9]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n',
    '!!js/function "function(){}"',
    'openapi: 3.1.0\ninfo: !!binary aGVsbG8=\npaths: {}\n',
  ),
);

/** Serialise a generated document as the importer may receive it. */
function asText(doc: unknown, form: 'json' | 'yaml'): string {
  if (form === 'json') return JSON.stringify(doc) ?? 'null';
  try {
    return dumpYaml(doc, { noRefs: true, skipInvalid: true });
  } catch {
    return JSON.stringify(doc) ?? 'null';
  }
}

export type GeneratedImport = { kind: string; source: string | object };

/** A document to import, in one of the forms the importer takes. */
export const generatedImport: fc.Arbitrary<GeneratedImport> = fc.oneof(
  {
    arbitrary: fc
      .tuple(
        fc.oneof(validDocument, validishDocument, broken),
        fc.constantFrom('object', 'json', 'yaml') as fc.Arbitrary<string>,
      )
      .map(([doc, form]) => ({
        kind: `document as ${form}`,
        source: form === 'object' ? (doc as object) : asText(doc, form as 'json' | 'yaml'),
      })),
    weight: 10,
  },
  { arbitrary: huge.map((doc) => ({ kind: 'huge', source: JSON.stringify(doc) })), weight: 1 },
  { arbitrary: garbageText.map((text) => ({ kind: 'text', source: text })), weight: 2 },
);
