/**
 * The one rule for text that arrives from outside, shared by every surface: no NUL character and no unpaired UTF-16
 * surrogate, in a decoded path segment, a query name or value, or any key or string of a JSON body. Postgres cannot
 * store NUL in text (22021) or jsonb (22P05), and a lone surrogate is silently turned into U+FFFD on the way there,
 * so both are refused up front with 400 `validation_failed` instead of failing (or corrupting) deeper down.
 */
import { ValidationError } from './errors.js';

// Without the `u` flag the class ranges match UTF-16 code units: a high surrogate not followed by a low one, or a low
// surrogate not preceded by a high one. Matching NUL is the point of this expression.
// eslint-disable-next-line no-control-regex
const BAD_TEXT = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export const BAD_TEXT_MESSAGE = 'must not contain NUL characters or unpaired UTF-16 surrogates';

/** Whether a decoded string breaks the input rule. */
export function isBadText(value: string): boolean {
  return BAD_TEXT.test(value);
}

function refuse(where: string): ValidationError {
  return new ValidationError(`Invalid ${where}: text ${BAD_TEXT_MESSAGE}.`, {
    details: { issues: [{ path: where, message: `Text ${BAD_TEXT_MESSAGE}.` }] },
  });
}

/** Throw 400 `validation_failed` when `value` breaks the rule; `where` names it for the caller (`query.q`). */
export function checkText(value: string, where: string): void {
  if (isBadText(value)) throw refuse(where);
}

/**
 * Walk a parsed JSON value (object keys and string values) and throw on the first string that breaks the rule.
 * Iterative, so a deeply nested body cannot overflow the stack.
 */
export function checkJson(value: unknown, where = 'body'): void {
  const stack: [unknown, string][] = [[value, where]];
  while (stack.length > 0) {
    const [item, path] = stack.pop()!;
    if (typeof item === 'string') checkText(item, path);
    else if (Array.isArray(item)) item.forEach((v, i) => stack.push([v, `${path}.${i}`]));
    else if (item !== null && typeof item === 'object') {
      for (const [key, v] of Object.entries(item)) {
        checkText(key, `${path} (a key)`);
        stack.push([v, `${path}.${key}`]);
      }
    }
  }
}

/** Check every name and value of a parsed query (`?a=1&a=2` gives an array). */
export function checkQuery(query: Record<string, string | string[] | undefined>, where = 'query'): void {
  for (const [name, value] of Object.entries(query)) {
    checkText(name, `${where} (a parameter name)`);
    for (const v of Array.isArray(value) ? value : [value ?? '']) checkText(v, `${where}.${name}`);
  }
}

/** Check a raw query string (`?a=1&b=%00`) as URLSearchParams decodes it (the gateway's routing). */
export function checkSearch(search: string, where = 'query'): void {
  if (!search.includes('%')) return; // the HTTP parser refuses raw control characters: only an escape can carry NUL
  for (const [name, value] of new URLSearchParams(search)) {
    checkText(name, `${where} (a parameter name)`);
    checkText(value, `${where}.${name}`);
  }
}

/**
 * Check each segment of a raw (percent-encoded) URL path as a router would decode it. A segment that does not decode
 * (malformed percent-encoding) is left to the router, which then keeps it encoded, so it can carry neither character.
 */
export function checkPath(rawPath: string, where = 'path'): void {
  for (const segment of rawPath.split('/')) {
    if (!segment.includes('%')) continue; // the HTTP parser already refuses raw control characters
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      continue;
    }
    checkText(decoded, where);
  }
}
