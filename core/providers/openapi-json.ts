/**
 * The OpenAPI import's JSON plumbing: the error every refusal is, a deep copy of untrusted JSON charged against a byte
 * budget (so YAML aliases and $ref inlining cannot blow up), and small type guards.
 */
import { type AppErrorOptions, ValidationError } from '../errors.js';

/** Plain JSON. $refs are inlined; a circular schema refers to itself through `$defs` at the schema's root. */
export type JsonSchema = Record<string, unknown>;
export type JsonObject = Record<string, unknown>;

// Deep enough for any real schema with its $refs inlined; shallow enough that the recursive walks (here and in the
// parser) cannot overflow the stack.
const MAX_DEPTH = 512;

export class OpenApiImportError extends ValidationError {
  constructor(message: string, options?: Pick<AppErrorOptions, 'details' | 'cause'>) {
    super(message, options);
    // Stable even if class names are mangled: callers and Temporal match on it.
    this.name = 'OpenApiImportError';
  }
}

/** Approximate serialised bytes left; `exceeded` throws the error that fits the context. Spending also spends from
 *  the parent, so one endpoint's schema is limited on its own and all of them together. */
export class Budget {
  constructor(
    private remaining: number,
    private readonly exceeded: () => never,
    private readonly parent?: Budget,
  ) {}

  spend(bytes: number): void {
    this.remaining -= bytes;
    if (this.remaining < 0) this.exceeded();
    this.parent?.spend(bytes);
  }
}

/**
 * Deep copy of JSON-compatible data, charged against `budget` as it goes (shared sub-objects are charged each time
 * they are reached: that is exactly the expansion JSON.stringify would perform). `substitute` may replace an object
 * (it is told whether the object is one of its own ancestors); without it, cycles are refused.
 */
export function cloneJson(
  value: unknown,
  budget: Budget,
  substitute?: (obj: object, inCycle: boolean) => unknown,
  depth = 0,
  ancestors = new Set<object>(),
): unknown {
  if (value === null || typeof value === 'boolean') {
    budget.spend(5);
    return value;
  }
  if (typeof value === 'number') {
    budget.spend(24);
    return Number.isFinite(value) ? value : null;
  }
  if (typeof value === 'string') {
    budget.spend(value.length + 2);
    return value;
  }
  if (typeof value !== 'object') {
    throw new OpenApiImportError(`The OpenAPI document contains a value JSON cannot represent (${typeof value}).`);
  }
  const inCycle = ancestors.has(value);
  const replacement = substitute?.(value, inCycle);
  if (replacement !== undefined) return cloneJson(replacement, budget);
  if (inCycle) throw new OpenApiImportError('The OpenAPI document contains a circular object reference.');
  if (depth > MAX_DEPTH) throw new OpenApiImportError(`The OpenAPI document is nested more than ${MAX_DEPTH} levels.`);
  ancestors.add(value);
  budget.spend(2);
  let copy: unknown;
  if (Array.isArray(value)) {
    copy = (value as unknown[]).map((v) => {
      budget.spend(1);
      return cloneJson(v ?? null, budget, substitute, depth + 1, ancestors);
    });
  } else if (isRecord(value)) {
    const out: JsonObject = {};
    for (const [key, v] of Object.entries(value)) {
      if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue; // as JSON.stringify does
      budget.spend(key.length + 4);
      defineProperty(out, key, cloneJson(v, budget, substitute, depth + 1, ancestors));
    }
    copy = out;
  } else {
    throw new OpenApiImportError('The OpenAPI document must contain only plain JSON objects and arrays.');
  }
  ancestors.delete(value);
  return copy;
}

export function isRecord(value: unknown): value is JsonObject {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

export function asRecord(value: unknown): JsonObject | undefined {
  return isRecord(value) ? value : undefined;
}

export function asString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Own data property even for '__proto__', which plain assignment would turn into a prototype change. */
export function defineProperty(target: JsonObject, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function escapePointer(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function firstLine(text: string): string {
  return text.split('\n')[0]?.trim() ?? text;
}
