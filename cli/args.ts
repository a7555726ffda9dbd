/**
 * Parsers for option values. They throw commander's InvalidArgumentError, which the entry point turns into a usage
 * error (exit code 2) before anything is sent.
 */
import { readFileSync } from 'node:fs';
import { InvalidArgumentError, type Command } from 'commander';
import { METHODS, type Method } from './client.js';

/**
 * Money in: a bare integer is cents (`500`), a value with `$` or a decimal point is dollars (`$5`, `5.00`).
 * `none` clears a cap (null).
 */
export function parseMoney(value: string): number | null {
  const v = value.trim();
  if (/^(none|null)$/i.test(v)) return null;
  if (/^\d+$/.test(v)) return checkCents(Number(v));
  const dollars = /^\$?(\d+)(?:\.(\d{1,2}))?$/.exec(v);
  if (dollars && (v.startsWith('$') || v.includes('.'))) {
    return checkCents(Number(dollars[1]) * 100 + Number((dollars[2] ?? '0').padEnd(2, '0')));
  }
  throw new InvalidArgumentError('expected cents (500), dollars ($5 or 5.00) or "none".');
}

function checkCents(cents: number): number {
  if (!Number.isSafeInteger(cents)) throw new InvalidArgumentError('amount too large.');
  return cents;
}

/** Like parseMoney, but a value is required (checkout amounts, prices). */
export function parseAmount(value: string): number {
  const cents = parseMoney(value);
  if (cents === null) throw new InvalidArgumentError('expected cents (500) or dollars ($5 or 5.00).');
  return cents;
}

export function parsePositiveInt(value: string): number {
  if (!/^\d+$/.test(value.trim()) || Number(value) < 1) throw new InvalidArgumentError('expected a positive integer.');
  return Number(value);
}

export function parseNonNegativeInt(value: string): number {
  if (!/^\d+$/.test(value.trim())) throw new InvalidArgumentError('expected a non-negative integer.');
  return Number(value);
}

/** `--data '{"a":1}'` or `--data @body.json`: the text must be JSON. Returns the text itself, to send unchanged. */
export function parseJsonData(value: string): string {
  let text = value;
  if (value.startsWith('@')) {
    try {
      text = readFileSync(value.slice(1), 'utf8');
    } catch (err) {
      throw new InvalidArgumentError(
        `cannot read ${value.slice(1)}: ${(err as NodeJS.ErrnoException).code ?? 'error'}.`,
      );
    }
  }
  try {
    JSON.parse(text);
  } catch {
    throw new InvalidArgumentError(`${value.startsWith('@') ? value.slice(1) : 'the value'} is not valid JSON.`);
  }
  return text;
}

/** A JSON object from `--data`: for commands whose body is an object that flags may add to. */
export function jsonObject(text: string | undefined, flag = '--data'): Record<string, unknown> {
  if (text === undefined) return {};
  const value = JSON.parse(text) as unknown;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidArgumentError(`${flag} must be a JSON object.`);
  }
  return value as Record<string, unknown>;
}

/** Text or `@file` (document bodies, secrets). */
export function parseTextOrFile(value: string): string {
  if (!value.startsWith('@')) return value;
  try {
    return readFileSync(value.slice(1), 'utf8');
  } catch (err) {
    throw new InvalidArgumentError(`cannot read ${value.slice(1)}: ${(err as NodeJS.ErrnoException).code ?? 'error'}.`);
  }
}

/** Repeated `k=v` options collected in order (the value may contain `=`). */
export function collectPair(value: string, previous: [string, string][] = []): [string, string][] {
  const at = value.indexOf('=');
  if (at <= 0) throw new InvalidArgumentError(`expected key=value, got "${value}".`);
  return [...previous, [value.slice(0, at), value.slice(at + 1)]];
}

export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

export function parseList(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

export function parseMethod(value: string): Method {
  const m = METHODS.find((method) => method === value.toUpperCase());
  if (!m) throw new InvalidArgumentError('expected GET, POST, PUT, PATCH, DELETE, HEAD or OPTIONS.');
  return m;
}

export function parsePath(value: string): string {
  if (!value.startsWith('/')) throw new InvalidArgumentError('must start with /.');
  return value;
}

/** The `<slug> <method> <path>` of a gateway call (svc call, svc quote). */
export function withCallTarget(cmd: Command): Command {
  return cmd
    .argument('<slug>', 'the API slug')
    .argument('<method>', 'HTTP method', parseMethod)
    .argument('<path>', 'the path after the slug, e.g. /forecast/paris', parsePath);
}
