/**
 * The demo's sample APIs (`npm start -- --demo`, issue 31 item 7): what each one is, its endpoints with prices, the
 * OpenAPI pieces its description is built from (core/demo/demo-openapi.ts), and the pure handler the demo upstream
 * (core/demo/demo-upstream.ts) answers with. Every API has free endpoints, so a key with no credit can call them.
 */
import { analyze, wordCount } from './text-stats.js';
import { convert, DIMENSIONS } from './units.js';
import { countries, country, currencies, language, timeIn } from './world-data.js';
import { status, statuses } from './http-statuses.js';

export type JsonSchema = Record<string, unknown>;

export interface DemoRequest {
  query: URLSearchParams;
  params: Record<string, string>;
  body: unknown;
  now: Date;
}

export interface DemoAnswer {
  status: number;
  body: unknown;
}

export interface DemoEndpoint {
  method: 'GET' | 'POST';
  path: string;
  operationId: string;
  summary: string;
  priceCents: number;
  /** OpenAPI parameter objects (path and query). */
  parameters?: JsonSchema[];
  /** The JSON request body's schema (required when present). */
  body?: JsonSchema;
  /** The 200 answer's schema. */
  response: JsonSchema;
  handle(req: DemoRequest): DemoAnswer;
  /** Typical latency of the sample history, ms (the demo's history, core/demo/demo-history.ts). */
  latencyMs: number;
  /** Share of the API's calls in the sample history. */
  weight: number;
}

export interface DemoApi {
  /** The path segment under the demo upstream's prefix. */
  key: string;
  slug: string;
  name: string;
  summary: string;
  description: string;
  category: string;
  tags: string[];
  examples: string[];
  /** Calls per day in the sample history. */
  dailyCalls: number;
  endpoints: DemoEndpoint[];
}

const ok = (body: unknown): DemoAnswer => ({ status: 200, body });
const problem = (status: number, message: string): DemoAnswer => ({ status, body: { error: { message } } });

const str = (description: string, extra: JsonSchema = {}): JsonSchema => ({ type: 'string', description, ...extra });
const int = (description: string): JsonSchema => ({ type: 'integer', description });
const num = (description: string): JsonSchema => ({ type: 'number', description });
const obj = (properties: Record<string, JsonSchema>, required = Object.keys(properties)): JsonSchema => ({
  type: 'object',
  properties,
  required,
});
const list = (items: JsonSchema): JsonSchema => ({ type: 'array', items });
const query = (name: string, schema: JsonSchema, required = false): JsonSchema => ({
  name,
  in: 'query',
  required,
  schema,
});
const pathParam = (name: string, schema: JsonSchema): JsonSchema => ({ name, in: 'path', required: true, schema });

const LANG = query('lang', str('A BCP 47 language tag for the names (default en).', { default: 'en', example: 'fr' }));

function textOf(body: unknown): string | undefined {
  const text = (body as { text?: unknown } | null)?.text;
  return typeof text === 'string' ? text : undefined;
}

const UNITS: DemoApi = {
  key: 'unit-converter',
  slug: 'demo-unit-converter',
  name: 'Unit Converter (demo)',
  summary: 'Convert lengths, masses, volumes, temperatures, speeds, data sizes, areas and durations.',
  description:
    'A sample API served by this marketplace itself (`npm start -- --demo`). `GET /units` lists every unit by ' +
    'dimension for free; `GET /convert` converts a value between two units of one dimension (temperatures ' +
    'included) for 1 cent.',
  category: 'science-and-math',
  tags: ['units', 'conversion', 'measurement', 'demo'],
  examples: ['convert miles to kilometres', 'how many pounds in a kilogram', 'celsius to fahrenheit'],
  dailyCalls: 140,
  endpoints: [
    {
      method: 'GET',
      path: '/units',
      operationId: 'listUnits',
      summary: 'Every unit, by dimension',
      priceCents: 0,
      response: obj({
        dimensions: list(
          obj({
            name: str('Dimension'),
            base: str('Base unit'),
            units: list(obj({ symbol: str('Symbol'), name: str('Name') })),
          }),
        ),
      }),
      handle: () =>
        ok({
          dimensions: DIMENSIONS.map((d) => ({
            name: d.name,
            base: d.base,
            units: d.units.map(({ symbol, name }) => ({ symbol, name })),
          })),
        }),
      latencyMs: 6,
      weight: 0.3,
    },
    {
      method: 'GET',
      path: '/convert',
      operationId: 'convert',
      summary: 'Convert a value between two units',
      priceCents: 1,
      parameters: [
        query('value', { type: 'number', description: 'The amount to convert (default 1).', default: 1, example: 5 }),
        query('from', str('The unit to convert from (default km).', { default: 'km', example: 'mi' })),
        query('to', str('The unit to convert to (default mi).', { default: 'mi', example: 'km' })),
      ],
      response: obj({
        value: num('Input'),
        from: str('From'),
        to: str('To'),
        dimension: str('Dimension'),
        result: num('Result'),
      }),
      handle: ({ query: q }) => {
        const value = Number(q.get('value') ?? '1');
        if (!Number.isFinite(value)) return problem(400, '`value` must be a number.');
        const out = convert(value, q.get('from') ?? 'km', q.get('to') ?? 'mi');
        return out.ok
          ? ok({ value: out.value, from: out.from, to: out.to, dimension: out.dimension, result: out.result })
          : problem(400, out.message);
      },
      latencyMs: 9,
      weight: 0.7,
    },
  ],
};

const TEXT: DemoApi = {
  key: 'text-stats',
  slug: 'demo-text-stats',
  name: 'Text Statistics (demo)',
  summary: 'Word counts, sentences, reading time and the most frequent words of any text, in any script.',
  description:
    'A sample API served by this marketplace itself (`npm start -- --demo`). `GET /word-count` counts words and ' +
    'characters for free; `POST /analyze` returns the full statistics (sentences, paragraphs, unique words, ' +
    'reading and speaking time, top words) for 2 cents. Words are found by Unicode segmentation.',
  category: 'text-analysis',
  tags: ['text', 'nlp', 'word count', 'readability', 'demo'],
  examples: ['count the words in a text', 'reading time of an article', 'most frequent words'],
  dailyCalls: 90,
  endpoints: [
    {
      method: 'GET',
      path: '/word-count',
      operationId: 'wordCount',
      summary: 'Count the words and characters of a short text',
      priceCents: 0,
      parameters: [
        query(
          'text',
          str('The text (default empty).', { default: '', example: 'Hello, wide world!', maxLength: 2000 }),
        ),
      ],
      response: obj({ words: int('Words'), characters: int('Characters') }),
      handle: ({ query: q }) => ok(wordCount(q.get('text') ?? '')),
      latencyMs: 7,
      weight: 0.45,
    },
    {
      method: 'POST',
      path: '/analyze',
      operationId: 'analyzeText',
      summary: 'Full statistics of a text',
      priceCents: 2,
      body: obj(
        {
          text: str('The text to analyse', { maxLength: 100000 }),
          top: { type: 'integer', minimum: 1, maximum: 50, default: 5 },
        },
        ['text'],
      ),
      response: obj({
        words: int('Words'),
        sentences: int('Sentences'),
        reading_time_seconds: int('Reading time'),
        top_words: list(obj({ word: str('Word'), count: int('Count') })),
      }),
      handle: ({ body }) => {
        const text = textOf(body);
        if (text === undefined) return problem(400, 'Send a JSON body {"text": "..."}.');
        if (text.length > 100_000) return problem(413, '`text` is longer than 100,000 characters.');
        const top = Number((body as { top?: unknown }).top ?? 5);
        return ok(analyze(text, Number.isInteger(top) && top >= 1 && top <= 50 ? top : 5));
      },
      latencyMs: 24,
      weight: 0.55,
    },
  ],
};

const WORLD: DemoApi = {
  key: 'world-data',
  slug: 'demo-world-data',
  name: 'World Data Lookup (demo)',
  summary: 'Countries, currencies and the time in any time zone, from the open CLDR and IANA data bundled with Node.',
  description:
    'A sample API served by this marketplace itself (`npm start -- --demo`), a lookup over open data: the Unicode ' +
    'CLDR (names of countries and currencies in many languages) and the IANA time zone database, as bundled with ' +
    'Node.js. Lists are free; one country with its names in ten languages, or the time in a zone, cost 1 cent.',
  category: 'open-data',
  tags: ['countries', 'currencies', 'time zones', 'iso 3166', 'iso 4217', 'demo'],
  examples: ['country name in french', 'list of currency codes', 'what time is it in Tokyo'],
  dailyCalls: 110,
  endpoints: [
    {
      method: 'GET',
      path: '/countries',
      operationId: 'listCountries',
      summary: 'Every country and territory (ISO 3166-1 alpha-2) with its flag',
      priceCents: 0,
      parameters: [LANG],
      response: obj({ countries: list(obj({ code: str('ISO code'), name: str('Name'), flag: str('Flag emoji') })) }),
      handle: ({ query: q }) => {
        const lang = language(q.get('lang'));
        return lang ? ok({ countries: countries(lang) }) : problem(400, '`lang` is not a language tag.');
      },
      latencyMs: 11,
      weight: 0.25,
    },
    {
      method: 'GET',
      path: '/countries/{code}',
      operationId: 'getCountry',
      summary: 'One country: its name in ten languages and its flag',
      priceCents: 1,
      parameters: [
        pathParam('code', str('ISO 3166-1 alpha-2 code', { example: 'JP', pattern: '^[A-Za-z]{2}$' })),
        LANG,
      ],
      response: obj({
        code: str('ISO code'),
        name: str('Name'),
        flag: str('Flag'),
        names: { type: 'object', additionalProperties: { type: 'string' } },
      }),
      handle: ({ params, query: q }) => {
        const lang = language(q.get('lang'));
        if (!lang) return problem(400, '`lang` is not a language tag.');
        const found = country(params.code ?? '', lang);
        return found ? ok(found) : problem(404, `No country with code "${params.code}": GET /countries lists them.`);
      },
      latencyMs: 8,
      weight: 0.3,
    },
    {
      method: 'GET',
      path: '/currencies',
      operationId: 'listCurrencies',
      summary: 'Every current currency (ISO 4217) with its name and symbol',
      priceCents: 0,
      parameters: [LANG],
      response: obj({ currencies: list(obj({ code: str('ISO code'), name: str('Name'), symbol: str('Symbol') })) }),
      handle: ({ query: q }) => {
        const lang = language(q.get('lang'));
        return lang ? ok({ currencies: currencies(lang) }) : problem(400, '`lang` is not a language tag.');
      },
      latencyMs: 14,
      weight: 0.15,
    },
    {
      method: 'GET',
      path: '/time',
      operationId: 'timeInZone',
      summary: 'The time now in an IANA time zone',
      priceCents: 1,
      parameters: [query('zone', str('An IANA time zone (default UTC).', { default: 'UTC', example: 'Asia/Tokyo' }))],
      response: obj({
        zone: str('Zone'),
        local_time: str('Local date and time with offset'),
        utc_offset: str('Offset'),
        weekday: str('Weekday'),
        utc_time: str('UTC'),
      }),
      handle: ({ query: q, now }) => {
        const zone = q.get('zone') ?? 'UTC';
        const at = timeIn(zone, now);
        return at ? ok(at) : problem(400, `Unknown time zone "${zone}" (use an IANA name such as Europe/Paris).`);
      },
      latencyMs: 7,
      weight: 0.3,
    },
  ],
};

const STATUS: DemoApi = {
  key: 'http-status',
  slug: 'demo-http-status',
  name: 'HTTP Status Codes (demo)',
  summary: 'Every HTTP status code with its reason phrase, class, whether to retry, and what it means. Free.',
  description:
    'A sample API served by this marketplace itself (`npm start -- --demo`), entirely free: a key with no credit ' +
    'can call it. `GET /statuses` lists every code Node.js knows; `GET /statuses/{code}` explains one.',
  category: 'development',
  tags: ['http', 'status codes', 'reference', 'demo'],
  examples: ['what does HTTP 429 mean', 'list http status codes', 'is a 503 retryable'],
  dailyCalls: 60,
  endpoints: [
    {
      method: 'GET',
      path: '/statuses',
      operationId: 'listStatuses',
      summary: 'Every HTTP status code',
      priceCents: 0,
      response: obj({ statuses: list(obj({ code: int('Code'), reason: str('Reason phrase'), class: str('Class') })) }),
      handle: () => ok({ statuses: statuses() }),
      latencyMs: 5,
      weight: 0.35,
    },
    {
      method: 'GET',
      path: '/statuses/{code}',
      operationId: 'getStatus',
      summary: 'One status code explained',
      priceCents: 0,
      parameters: [pathParam('code', str('A three-digit status code', { example: '429', pattern: '^\\d{3}$' }))],
      response: obj({
        code: int('Code'),
        reason: str('Reason phrase'),
        class: str('Class'),
        retryable: { type: 'boolean' },
        description: { type: ['string', 'null'] },
      }),
      handle: ({ params }) => {
        const found = status(params.code ?? '');
        return found ? ok(found) : problem(404, `No HTTP status ${params.code}.`);
      },
      latencyMs: 5,
      weight: 0.65,
    },
  ],
};

export const DEMO_APIS: readonly DemoApi[] = [UNITS, TEXT, WORLD, STATUS];
