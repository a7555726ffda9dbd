/**
 * An installed tool's arguments to the request it makes (issue 31 item 3; the shapes: core/agent-tools/tool-shape.ts).
 *
 * A call uses the flat form (the advertised schema) or the grouped `path`/`query`/`body` form (the schema before
 * issue 31). Which one: a key only the grouped schema has (`path`, or `query`/`body` when that place is flat) makes it
 * grouped; otherwise it is flat (so a key both forms name, like `idempotency_key`, or `body` for a non-object body,
 * counts for either). Keys of both forms at once are refused: the form is named, and the keys of each. A key neither
 * form has is refused with the closest expected name ("did you mean `query`?"). Then the arguments are checked with
 * Ajv against that form's schema; every refusal is 400 `validation_failed` with `details.issues`, before anything is
 * sent upstream.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { createHash } from 'node:crypto';
import { ValidationError } from '../errors.js';
import { checkKnownArguments } from './did-you-mean.js';
import { IDEMPOTENCY_KEY, type ToolInputSchema } from './tool-shape.js';

type Args = Record<string, unknown>;

/** What an installed tool's call sends: path parameters, the query object, the JSON body, the idempotency key. */
export interface ToolRequest {
  path: Args;
  query?: unknown;
  body?: unknown;
  idempotency_key?: string;
}

const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
addFormats.default(ajv);
const validators = new Map<string, ValidateFunction | null>();
const MAX_VALIDATORS = 500;

/** The compiled schema (cached by content); null when the provider's schema does not compile. */
function validatorOf(schema: Args): ValidateFunction | null {
  const id = createHash('sha256').update(JSON.stringify(schema)).digest('hex');
  let validate = validators.get(id);
  if (validate === undefined) {
    try {
      validate = ajv.compile(schema);
    } catch {
      validate = null;
    }
    if (validators.size >= MAX_VALIDATORS) validators.delete(validators.keys().next().value!);
    validators.set(id, validate);
  }
  return validate;
}

const keysOf = (schema: Args): string[] =>
  schema.properties && typeof schema.properties === 'object' ? Object.keys(schema.properties) : [];

/** Which form the call uses; refuses a call that mixes them. */
function formOf(shape: ToolInputSchema, args: Args): 'flat' | 'grouped' {
  const flat = new Set(keysOf(shape.schema));
  const grouped = new Set(keysOf(shape.grouped));
  const keys = Object.keys(args);
  const groupedOnly = keys.filter((k) => grouped.has(k) && !flat.has(k));
  const flatOnly = keys.filter((k) => flat.has(k) && !grouped.has(k));
  if (groupedOnly.length === 0) return 'flat';
  if (flatOnly.length === 0) return 'grouped';
  const list = (names: string[]) => names.map((n) => `\`${n}\``).join(', ');
  throw new ValidationError(
    `Send either flat arguments (here ${list(flatOnly)}) or the grouped form (here ${list(groupedOnly)}), not both: ` +
      `the flat form is ${list([...flat])}.`,
    {
      details: {
        flat_arguments: flatOnly,
        grouped_arguments: groupedOnly,
        issues: [{ path: '(arguments)', message: 'mixes flat arguments and the grouped path/query/body form' }],
      },
    },
  );
}

/** Ajv's errors as our issues (paths with dots; the root is `(arguments)`). */
function check(schema: Args, args: Args, requiredPath: string[]): void {
  const validate = validatorOf(schema);
  const ok = validate ? validate(args) : true;
  const issues = (validate?.errors ?? []).map((e) => ({
    path: e.instancePath.replace(/^\//, '').replaceAll('/', '.') || '(arguments)',
    message: e.message ?? 'is invalid',
  }));
  // A provider schema that does not compile checks nothing but the path parameters.
  if (!validate) for (const p of requiredPath) issues.push({ path: p, message: 'is required' });
  if (ok && issues.length === 0) return;
  throw new ValidationError(`Invalid arguments: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, {
    details: { issues },
  });
}

const idempotencyOf = (args: Args) =>
  typeof args[IDEMPOTENCY_KEY] === 'string' ? { idempotency_key: args[IDEMPOTENCY_KEY] } : {};

/**
 * Check an installed tool's arguments (see the file header) and return the request they make. Throws 400
 * `validation_failed`.
 */
export function toolRequest(shape: ToolInputSchema, raw: unknown): ToolRequest {
  const args: Args = raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Args) : {};
  const form = formOf(shape, args);
  const schema = form === 'flat' ? shape.schema : shape.grouped;
  const unknown = checkKnownArguments(args, keysOf(schema));
  if (unknown) throw unknown;
  if (form === 'grouped') {
    const path = (args.path ?? {}) as Args;
    const missing = shape.args.filter((a) => a.in === 'path' && path[a.param!] === undefined);
    check(
      schema,
      args,
      missing.map((a) => `path.${a.param}`),
    );
    return { path, query: args.query, body: args.body, ...idempotencyOf(args) };
  }
  check(
    schema,
    args,
    shape.args.filter((a) => a.in === 'path' && args[a.name] === undefined).map((a) => a.name),
  );
  const request: ToolRequest = { path: {} };
  for (const arg of shape.args) {
    const value = args[arg.name];
    if (value === undefined) continue;
    if (arg.in === 'path') request.path[arg.param ?? arg.name] = value;
    else if (arg.param === undefined) request[arg.in] = value;
    else ((request[arg.in] ??= {}) as Args)[arg.param] = value;
  }
  return { ...request, ...idempotencyOf(args) };
}
