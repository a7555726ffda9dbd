/**
 * The endpoint editor's JSON Schema textareas (issue 31): the text is parsed as JSON (a syntax error names its line and
 * column, counted from 1 as the person sees them in the textarea), must be an object, at most 64 KB, and valid as a
 * JSON Schema: Ajv checks it against its meta-schema (draft 2020-12 unless `$schema` names draft-07) and compiles it
 * (a `$ref` that resolves nowhere is refused). Unknown keywords such as OpenAPI's `example` are allowed, as the
 * OpenAPI import keeps them. Every refusal is a `FormError` beside the textarea.
 */
import { Ajv, type ErrorObject } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { fieldError, type FieldSpec } from '../form-errors.js';

/** The limit of a stored schema (providers.schemas.ts JsonSchemaInput). */
export const MAX_SCHEMA_BYTES = 64 * 1024;

type Json = Record<string, unknown>;

/** Where JSON text stops being JSON: the offset, and what was expected there. */
class JsonSyntax extends Error {
  constructor(
    readonly offset: number,
    readonly reason: string,
  ) {
    super(reason);
  }
}

const shown = (c: string) => (c === '\n' ? 'a line break' : `“${c}”`);

/** A strict JSON reader that only finds the first error (JSON.parse's messages do not always give a position). */
class JsonScan {
  private i = 0;
  constructor(private readonly s: string) {}

  check(): void {
    this.value();
    this.ws();
    if (this.i < this.s.length) this.fail('unexpected text after the end of the JSON');
  }

  private fail(reason: string): never {
    throw new JsonSyntax(this.i, reason);
  }

  private ws(): void {
    while (this.i < this.s.length && ' \t\n\r'.includes(this.s[this.i]!)) this.i++;
  }

  private value(): void {
    this.ws();
    const c = this.s[this.i];
    if (c === undefined) this.fail('the JSON ends too early (a value is missing)');
    if (c === '{') return this.members('}', () => this.member());
    if (c === '[') return this.members(']', () => this.value());
    if (c === '"') return this.string();
    if (/[-0-9]/.test(c)) return this.number();
    for (const word of ['true', 'false', 'null']) {
      if (this.s.startsWith(word, this.i)) {
        this.i += word.length;
        return;
      }
    }
    this.fail(`unexpected ${shown(c)} (a value must be "text", a number, true, false, null, {…} or […])`);
  }

  /** `{…}` or `[…]`: items separated by commas, no trailing comma. */
  private members(close: string, item: () => void): void {
    this.i++;
    this.ws();
    if (this.s[this.i] === close) {
      this.i++;
      return;
    }
    for (;;) {
      item();
      this.ws();
      const c = this.s[this.i];
      if (c === close) {
        this.i++;
        return;
      }
      if (c !== ',') this.fail(`expected “,” or “${close}”${c === undefined ? ' before the end' : ''}`);
      this.i++;
      this.ws();
      if (this.s[this.i] === close) this.fail(`a comma before “${close}” (JSON allows no trailing comma)`);
    }
  }

  private member(): void {
    this.ws();
    if (this.s[this.i] !== '"') this.fail('expected a property name in double quotes');
    this.string();
    this.ws();
    if (this.s[this.i] !== ':') this.fail('expected “:” after the property name');
    this.i++;
    this.value();
  }

  private string(): void {
    this.i++;
    for (;;) {
      const c = this.s[this.i];
      if (c === undefined) this.fail('a string is not closed (a " is missing)');
      if (c === '"') {
        this.i++;
        return;
      }
      if (c < ' ') this.fail('a line break or control character inside a string (write \\n)');
      this.i += c === '\\' ? 2 : 1;
    }
  }

  private number(): void {
    const m = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(this.s.slice(this.i));
    if (!m) this.fail('a number is not valid');
    this.i += m[0].length;
  }
}

/** `line N, column M` of an offset, both from 1. */
export function lineColumn(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - (before.lastIndexOf('\n') + 1) + 1;
  return `line ${line}, column ${column}`;
}

/** JSON text → a value; a syntax error is refused beside the field with its line and column. */
export function parseJsonField(text: string, field: FieldSpec): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    try {
      new JsonScan(text).check();
    } catch (found) {
      if (found instanceof JsonSyntax) {
        throw fieldError(field.id, field.label, `not valid JSON at ${lineColumn(text, found.offset)}: ${found.reason}`);
      }
      throw found;
    }
    throw fieldError(field.id, field.label, `not valid JSON: ${(err as Error).message}`);
  }
}

const DRAFT_07 = /^https?:\/\/json-schema\.org\/draft-07\/schema#?$/;
const DRAFT_2020 = /^https:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/;

/** A fresh Ajv per check: nothing a provider's schema declares (`$id`) stays behind. */
function ajvFor(schema: Json, field: FieldSpec): Ajv | Ajv2020 {
  const declared = schema.$schema;
  const options = { strict: false, allErrors: false, validateFormats: true } as const;
  if (declared === undefined || (typeof declared === 'string' && DRAFT_2020.test(declared))) {
    const ajv = new Ajv2020(options);
    addFormats.default(ajv);
    return ajv;
  }
  if (typeof declared === 'string' && DRAFT_07.test(declared)) {
    const ajv = new Ajv(options);
    addFormats.default(ajv);
    return ajv;
  }
  throw fieldError(
    field.id,
    field.label,
    '“$schema” must be https://json-schema.org/draft/2020-12/schema or http://json-schema.org/draft-07/schema# (or leave it out)',
  );
}

/** Ajv's first error in words: where in the schema (`properties › query › type`) and what is wrong. */
function ajvWords(e: ErrorObject): string {
  const where = e.instancePath
    ? ` at ${e.instancePath
        .slice(1)
        .split('/')
        .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'))
        .join(' › ')}`
    : '';
  const allowed = Array.isArray(e.params.allowedValues) ? ` (${e.params.allowedValues.map(String).join(', ')})` : '';
  return `not a valid JSON Schema${where}: ${e.message ?? 'invalid'}${allowed}`;
}

/**
 * A JSON Schema textarea → the schema, or null when it is empty. Refused beside the field: a JSON syntax error (line
 * and column), anything but an object, more than 64 KB, a schema its meta-schema refuses, one that does not compile.
 */
export function readJsonSchema(text: string | undefined, field: FieldSpec): Json | null {
  const trimmed = (text ?? '').trim();
  if (!trimmed) return null;
  const value = parseJsonField(text!, field);
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw fieldError(
      field.id,
      field.label,
      'a JSON Schema here is an object, like {"type": "object", "properties": {}}',
    );
  }
  const schema = value as Json;
  if (JSON.stringify(schema).length > MAX_SCHEMA_BYTES) {
    throw fieldError(field.id, field.label, `use at most ${MAX_SCHEMA_BYTES} bytes of JSON`);
  }
  const ajv = ajvFor(schema, field);
  // A meta-schema is synchronous: validateSchema answers a boolean.
  if (!(ajv.validateSchema(schema) as boolean)) throw fieldError(field.id, field.label, ajvWords(ajv.errors![0]!));
  try {
    ajv.compile(schema);
  } catch (err) {
    throw fieldError(field.id, field.label, `not a usable JSON Schema: ${(err as Error).message}`);
  }
  return schema;
}
