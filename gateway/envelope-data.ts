/**
 * The `data` of a proxied call's success envelope, as JSON text ready to be spliced between the envelope's prefix
 * and suffix (gateway/respond.ts sendProxied). An upstream that says JSON (its Content-Type contains `json`) and
 * sends exactly one well-formed JSON value in valid UTF-8 is passed through as its own bytes (leading and trailing
 * whitespace dropped): no JSON.parse into objects and JSON.stringify back on every call. Anything else keeps the
 * old rules: a JSON upstream body the structural check refuses goes through JSON.parse (whatever it accepts is
 * re-serialised, whatever it refuses becomes a string), a non-JSON body is a JSON string, an empty body is `null`.
 */
import { isUtf8 } from 'node:buffer';

/** `data` for an upstream answer, as JSON text. */
export function envelopeDataJson(body: Buffer, contentType: string | undefined): string {
  if (body.length === 0) return 'null';
  if (contentType !== undefined && contentType.includes('json')) {
    const end = jsonValueEnd(body);
    // Valid UTF-8 too: JSON.parse would see U+FFFD where the bytes are broken, and the envelope must stay UTF-8.
    if (end > 0 && isUtf8(body)) return body.toString('utf8', skipWhitespace(body, 0), end);
    const text = body.toString('utf8');
    try {
      return JSON.stringify(JSON.parse(text));
    } catch {
      return JSON.stringify(text);
    }
  }
  return JSON.stringify(body.toString('utf8'));
}

const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const IN_OBJECT = 1;
const IN_ARRAY = 2;

/** Characters allowed after a backslash, other than `u`: `" \ / b f n r t`. */
const SIMPLE_ESCAPES = new Uint8Array(128);
for (const c of '"\\/bfnrt') SIMPLE_ESCAPES[c.charCodeAt(0)] = 1;

const HEX = new Uint8Array(128);
for (const c of '0123456789abcdefABCDEF') HEX[c.charCodeAt(0)] = 1;

function skipWhitespace(b: Uint8Array, i: number): number {
  const n = b.length;
  while (i < n) {
    const c = b[i]!;
    if (c !== SPACE && c !== LF && c !== CR && c !== TAB) break;
    i++;
  }
  return i;
}

/** The index just past the string starting at `i` (a quote), or -1. Bytes ≥ 0x80 are left to the UTF-8 check. */
function scanString(b: Uint8Array, i: number): number {
  const n = b.length;
  i++;
  while (i < n) {
    const c = b[i]!;
    if (c === QUOTE) return i + 1;
    if (c === BACKSLASH) {
      const e = b[i + 1];
      if (e === undefined || e >= 128) return -1;
      if (SIMPLE_ESCAPES[e] === 1) {
        i += 2;
        continue;
      }
      if (e !== 0x75 || i + 5 >= n) return -1; // \uXXXX
      if (HEX[b[i + 2]! & 127]! & HEX[b[i + 3]! & 127]! & HEX[b[i + 4]! & 127]! & HEX[b[i + 5]! & 127]!) {
        if ((b[i + 2]! | b[i + 3]! | b[i + 4]! | b[i + 5]!) >= 128) return -1;
        i += 6;
        continue;
      }
      return -1;
    }
    if (c < SPACE) return -1;
    i++;
  }
  return -1;
}

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= ZERO && c <= NINE;
}

/** The index just past the number starting at `i`, or -1 (RFC 8259 §6: no leading zeros, no `+`, no bare `.`). */
function scanNumber(b: Uint8Array, i: number): number {
  if (b[i] === MINUS) i++;
  if (b[i] === ZERO) i++;
  else if (isDigit(b[i])) {
    i++;
    while (isDigit(b[i])) i++;
  } else return -1;
  if (b[i] === DOT) {
    i++;
    if (!isDigit(b[i])) return -1;
    while (isDigit(b[i])) i++;
  }
  const e = b[i];
  if (e === 0x65 || e === 0x45) {
    i++;
    if (b[i] === PLUS || b[i] === MINUS) i++;
    if (!isDigit(b[i])) return -1;
    while (isDigit(b[i])) i++;
  }
  return i;
}

function scanLiteral(b: Uint8Array, i: number, literal: Uint8Array): number {
  for (let k = 0; k < literal.length; k++) if (b[i + k] !== literal[k]) return -1;
  return i + literal.length;
}

/** An object member's name and its colon at `i`: the index of the member's value, or -1. */
function scanMemberName(b: Uint8Array, i: number): number {
  if (b[i] !== QUOTE) return -1;
  i = scanString(b, i);
  if (i < 0) return -1;
  i = skipWhitespace(b, i);
  if (b[i] !== COLON) return -1;
  return skipWhitespace(b, i + 1);
}

const TRUE = Buffer.from('true');
const FALSE = Buffer.from('false');
const NULL = Buffer.from('null');

/**
 * When `b` is exactly one JSON value (RFC 8259, optional whitespace around it): the index just past the value;
 * otherwise -1. Iterative (an explicit stack), so nesting depth costs no call stack. Structure only: the bytes
 * inside strings are not checked for UTF-8 here.
 */
export function jsonValueEnd(b: Uint8Array): number {
  const n = b.length;
  const stack: number[] = [];
  let i = skipWhitespace(b, 0);
  for (;;) {
    // A value starts at i.
    const c = b[i];
    if (c === OPEN_OBJECT) {
      i = skipWhitespace(b, i + 1);
      if (b[i] === CLOSE_OBJECT) i++;
      else {
        i = scanMemberName(b, i);
        if (i < 0) return -1;
        stack.push(IN_OBJECT);
        continue;
      }
    } else if (c === OPEN_ARRAY) {
      i = skipWhitespace(b, i + 1);
      if (b[i] === CLOSE_ARRAY) i++;
      else {
        stack.push(IN_ARRAY);
        continue;
      }
    } else if (c === QUOTE) i = scanString(b, i);
    else if (c === 0x74) i = scanLiteral(b, i, TRUE);
    else if (c === 0x66) i = scanLiteral(b, i, FALSE);
    else if (c === 0x6e) i = scanLiteral(b, i, NULL);
    else i = scanNumber(b, i);
    if (i < 0) return -1;
    // After a value: close containers, or a comma and the next member.
    for (;;) {
      const end = i;
      i = skipWhitespace(b, i);
      if (stack.length === 0) return i === n ? end : -1;
      const d = b[i];
      const top = stack[stack.length - 1];
      if (d === COMMA) {
        i = skipWhitespace(b, i + 1);
        if (top === IN_OBJECT) {
          i = scanMemberName(b, i);
          if (i < 0) return -1;
        }
        break;
      }
      if (d === (top === IN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY)) {
        stack.pop();
        i++;
        continue;
      }
      return -1;
    }
  }
}
