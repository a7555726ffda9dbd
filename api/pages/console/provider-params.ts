/**
 * The endpoint editor's parameter rows ↔ an endpoint's `input_schema` (issue 31). A row is one parameter: its name,
 * its place (path, query or body), type, whether it is required, a description and an example. The rows make the
 * schema in the shape the OpenAPI import makes (core/providers/openapi-operations.ts), so the gateway, the smoke test
 * (a path parameter's `example`), the listing and the installed agent tools (core/agent-tools/tool-shape.ts) read an
 * API made in the console as they read an imported one:
 *
 *   { type: 'object',
 *     properties: { path?: {type: 'object', properties, required}, query?: {…}, body?: {…} },
 *     required?: ['path', …] }
 *
 * each parameter `{type, example?, description?}`; a group's `required` left out when empty (draft-04 forbids `[]`);
 * every `{name}` of the path is a required path parameter (a string when no row describes it), `query` and `body` are
 * required when one of their parameters is. A stored schema the rows cannot say exactly (nested schemas, `$defs`,
 * formats, a non-object body…) is edited as JSON instead (`rowsFromSchema` answers null).
 */
import { FormError, fieldError } from '../form-errors.js';
import { parseJsonField } from './provider-json.js';

export const PARAM_PLACES = ['path', 'query', 'body'] as const;
export const PARAM_TYPES = ['string', 'integer', 'number', 'boolean', 'array', 'object'] as const;
export type ParamPlace = (typeof PARAM_PLACES)[number];
export type ParamType = (typeof PARAM_TYPES)[number];

/** One row of the form, as typed (the example as text). */
export interface ParamRow {
  name: string;
  in: ParamPlace;
  type: ParamType;
  required: boolean;
  description: string;
  example: string;
}

type Json = Record<string, unknown>;

/** Rows a form may send (`p0_…` to `p59_…`). */
export const MAX_PARAM_ROWS = 60;
const MAX_NAME = 100;
const MAX_DESCRIPTION = 300;
const PATH_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const OTHER_NAME = /^[A-Za-z0-9_.[\]-]+$/;

const isRecord = (v: unknown): v is Json => !!v && typeof v === 'object' && !Array.isArray(v);
const oneOf = <T extends string>(list: readonly T[], v: unknown, fallback: T): T =>
  list.includes(v as T) ? (v as T) : fallback;

/** The input ids of row `i`'s fields (`p0-name`…); the form's names use `_` (`p0_name`). */
export const rowId = (i: number, part: keyof ParamRow) => `p${i}-${part}`;
export const rowName = (i: number, part: keyof ParamRow) => `p${i}_${part}`;

/** The names of a path template's parameters, in order (`/forecast/{city}` → `city`). */
export function pathParams(path: string): string[] {
  return [...path.matchAll(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1]!);
}

const blank = (r: ParamRow) => !r.name.trim() && !r.description.trim() && !r.example.trim();

/** The rows a form posted (blank ones kept, so a refusal names the row the person sees). */
export function readRows(body: Record<string, string>): ParamRow[] {
  const rows: ParamRow[] = [];
  for (let i = 0; i < MAX_PARAM_ROWS; i++) {
    if (body[rowName(i, 'name')] === undefined && body[rowName(i, 'in')] === undefined) continue;
    rows[i] = {
      name: (body[rowName(i, 'name')] ?? '').trim(),
      in: oneOf(PARAM_PLACES, body[rowName(i, 'in')], 'query'),
      type: oneOf(PARAM_TYPES, body[rowName(i, 'type')], 'string'),
      required: body[rowName(i, 'required')] === 'yes',
      description: (body[rowName(i, 'description')] ?? '').trim(),
      example: (body[rowName(i, 'example')] ?? '').trim(),
    };
  }
  return Array.from(rows, (r) => r ?? emptyRow());
}

export const emptyRow = (): ParamRow => ({
  name: '',
  in: 'query',
  type: 'string',
  required: false,
  description: '',
  example: '',
});

/** An example as typed → its value for the type; refused beside the row's example field. */
export function exampleValue(row: ParamRow, i: number): unknown {
  const text = row.example;
  const id = rowId(i, 'example');
  const label = `Parameter ${i + 1} (${row.name}), example`;
  const refuse = (what: string) => fieldError(id, label, what);
  switch (row.type) {
    case 'string':
      return text;
    case 'integer':
      if (!/^-?\d+$/.test(text) || !Number.isSafeInteger(Number(text))) throw refuse('enter a whole number, like 42');
      return Number(text);
    case 'number':
      if (!/^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(text)) throw refuse('enter a number, like 2.5');
      return Number(text);
    case 'boolean':
      if (!/^(true|false)$/i.test(text)) throw refuse('enter true or false');
      return text.toLowerCase() === 'true';
    case 'array': {
      const v = parseJsonField(text, { id, label });
      if (!Array.isArray(v)) throw refuse('enter a JSON list, like ["a", "b"]');
      return v;
    }
    case 'object': {
      const v = parseJsonField(text, { id, label });
      if (!isRecord(v)) throw refuse('enter a JSON object, like {"key": "value"}');
      return v;
    }
  }
}

/** An example value as the form shows it (text as is, anything else as JSON). */
export function exampleText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Row `i`'s own problems (name, place, description), each by its input id. */
function rowProblems(row: ParamRow, i: number, template: readonly string[]): Record<string, string> {
  const label = `Parameter ${i + 1}`;
  const nameId = rowId(i, 'name');
  if (!row.name) return fieldError(nameId, `${label}, name`, 'give the parameter a name, or clear its row').fields;
  if (row.name.length > MAX_NAME)
    return fieldError(nameId, `${label}, name`, `use at most ${MAX_NAME} characters`).fields;
  if (row.in === 'path') {
    if (!PATH_NAME.test(row.name)) {
      return fieldError(
        nameId,
        `${label}, name`,
        'a path parameter is letters, digits and _, not starting with a digit',
      ).fields;
    }
    if (!template.includes(row.name)) {
      return fieldError(
        rowId(i, 'in'),
        `${label} (${row.name}), place`,
        `the path has no {${row.name}}: add it to the path, or choose query or body`,
      ).fields;
    }
  } else if (!OTHER_NAME.test(row.name)) {
    return fieldError(nameId, `${label}, name`, 'use letters, digits and _ . - [ ] only').fields;
  }
  if (row.description.length > MAX_DESCRIPTION) {
    return fieldError(rowId(i, 'description'), `${label}, description`, `use at most ${MAX_DESCRIPTION} characters`)
      .fields;
  }
  return {};
}

interface Group {
  properties: Json;
  required: string[];
}

function groupSchema(g: Group): Json {
  return g.required.length
    ? { type: 'object', properties: g.properties, required: g.required }
    : {
        type: 'object',
        properties: g.properties,
      };
}

/** Add row `i` to its group; its problems by input id (none: added). */
function addRow(groups: Map<ParamPlace, Group>, row: ParamRow, i: number, template: readonly string[]) {
  const own = rowProblems(row, i, template);
  if (Object.keys(own).length) return own;
  const group = groups.get(row.in)!;
  if (Object.hasOwn(group.properties, row.name)) {
    const label = `Parameter ${i + 1}, name`;
    return fieldError(rowId(i, 'name'), label, `${row.name} is already a ${row.in} parameter above`).fields;
  }
  // Taken even when its example is refused, so a later row of the same name is refused too.
  const prop: Json = { type: row.type };
  group.properties[row.name] = prop;
  if (row.in === 'path' || row.required) group.required.push(row.name);
  try {
    if (row.example !== '') prop.example = exampleValue(row, i);
  } catch (err) {
    if (!(err instanceof FormError)) throw err;
    return err.fields;
  }
  if (row.description) prop.description = row.description;
  return {};
}

/** The rows (and the path's `{name}`s) → the input schema, or null when there is no parameter; every bad row refused. */
export function schemaFromRows(rows: readonly ParamRow[], path: string): Json | null {
  const template = pathParams(path);
  const groups = new Map<ParamPlace, Group>(PARAM_PLACES.map((p) => [p, { properties: {}, required: [] }]));
  const problems: Record<string, string> = {};
  rows.forEach((row, i) => {
    if (!blank(row)) Object.assign(problems, addRow(groups, row, i, template));
  });
  if (Object.keys(problems).length) throw new FormError(problems);
  // Every {name} of the path is a required path parameter; one no row describes is a string.
  const inPath = groups.get('path')!;
  for (const name of template) {
    if (Object.hasOwn(inPath.properties, name)) continue;
    inPath.properties[name] = { type: 'string' };
    inPath.required.push(name);
  }
  const properties: Json = {};
  const required: string[] = [];
  for (const [place, g] of groups) {
    if (!Object.keys(g.properties).length) continue;
    properties[place] = groupSchema(g);
    if (g.required.length) required.push(place);
  }
  if (!Object.keys(properties).length) return null;
  return required.length ? { type: 'object', properties, required } : { type: 'object', properties };
}

/** JSON with object keys sorted: two schemas that say the same thing compare equal. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    isRecord(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}

/** Whether two JSON values say the same (object keys in any order: jsonb keeps its own order). */
export const sameJson = (a: unknown, b: unknown) => canonical(a ?? null) === canonical(b ?? null);

/**
 * A stored input schema → the rows that say exactly the same, or null when the rows cannot (it is then edited as
 * JSON). No schema: no rows.
 */
export function rowsFromSchema(schema: Json | null, path: string): ParamRow[] | null {
  if (!schema) return [];
  if (schema.type !== 'object' || !isRecord(schema.properties)) return null;
  const groups = schema.properties;
  if (Object.keys(groups).some((place) => !PARAM_PLACES.includes(place as ParamPlace))) return null;
  const rows: ParamRow[] = [];
  // Places in the form's order (Postgres' jsonb keeps keys shortest first, so `body` would come before `path`).
  for (const place of PARAM_PLACES.filter((p) => Object.hasOwn(groups, p))) {
    const group = groups[place];
    if (!isRecord(group) || !isRecord(group.properties)) return null;
    const required = Array.isArray(group.required) ? group.required : [];
    for (const [name, prop] of Object.entries(group.properties)) {
      if (!isRecord(prop) || !PARAM_TYPES.includes(prop.type as ParamType)) return null;
      rows.push({
        name,
        in: place,
        type: prop.type as ParamType,
        required: required.includes(name),
        description: typeof prop.description === 'string' ? prop.description : '',
        example: prop.example === undefined ? '' : exampleText(prop.example),
      });
    }
  }
  try {
    return sameJson(schemaFromRows(rows, path), schema) ? rows : null;
  } catch {
    return null;
  }
}

/** A call an example makes: `GET /forecast/London?units=metric` and its JSON body, from the schema's examples. */
export function exampleCall(method: string, path: string, schema: Json | null): { line: string; body?: string } {
  const group = (place: ParamPlace): Json => {
    const g = isRecord(schema?.properties) ? schema.properties[place] : undefined;
    return isRecord(g) && isRecord(g.properties) ? g.properties : {};
  };
  const examples = (place: ParamPlace) =>
    Object.entries(group(place)).flatMap(([name, p]) =>
      isRecord(p) && p.example !== undefined ? [[name, p.example] as const] : [],
    );
  const pathExamples = new Map(examples('path'));
  const filled = path.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (m, name: string) =>
    pathExamples.has(name) ? encodeURIComponent(exampleText(pathExamples.get(name))) : m,
  );
  const query = new URLSearchParams(
    examples('query').map(([k, v]): [string, string] => [k, exampleText(v)]),
  ).toString();
  const body = examples('body');
  return {
    line: `${method} ${filled}${query ? `?${query}` : ''}`,
    ...(body.length ? { body: JSON.stringify(Object.fromEntries(body), null, 2) } : {}),
  };
}
