/**
 * The demo's HTTP status code reference (core/demo/demo-apis.ts): Node's own table of reason phrases
 * (`http.STATUS_CODES`), each code's class, whether a client may retry, and a line on the common ones. Pure.
 */
import { STATUS_CODES } from 'node:http';

const CLASSES: Record<number, string> = {
  1: 'informational',
  2: 'success',
  3: 'redirection',
  4: 'client error',
  5: 'server error',
};

/** Retrying the same request later can succeed (RFC 9110's guidance, and common practice for 408/425/429/5xx). */
const RETRYABLE = new Set([408, 425, 429, 500, 502, 503, 504]);

const NOTES: Record<number, string> = {
  200: 'The request succeeded.',
  201: 'The request succeeded and created a resource (its URL is in Location).',
  204: 'The request succeeded; there is no body.',
  301: 'Moved for good: use the URL in Location from now on.',
  302: 'Found elsewhere for now: follow Location, keep the original URL.',
  304: 'Not modified since the version the client holds (conditional request).',
  400: 'The request is malformed or fails validation; fix it before sending again.',
  401: 'No valid credentials were sent (WWW-Authenticate says how to authenticate).',
  402: 'Payment is required before the request can be served.',
  403: 'The credentials are valid but not allowed to do this.',
  404: 'Nothing exists at this URL.',
  405: 'The method is not allowed here (Allow lists the ones that are).',
  409: 'The request conflicts with the current state of the resource.',
  410: 'The resource existed and is gone for good.',
  413: 'The request body is larger than the server accepts.',
  422: 'The request is well-formed but its content cannot be processed.',
  428: 'The server requires a precondition (or an acceptance) first.',
  429: 'Too many requests: wait as Retry-After says, then retry.',
  500: 'The server failed unexpectedly.',
  502: 'A gateway or proxy got an invalid answer from the server behind it.',
  503: 'The server cannot serve the request right now; retry later (Retry-After may say when).',
  504: 'A gateway or proxy timed out waiting for the server behind it.',
};

export interface StatusInfo {
  code: number;
  reason: string;
  class: string;
  retryable: boolean;
  description: string | null;
}

function info(code: number): StatusInfo {
  return {
    code,
    reason: STATUS_CODES[code]!,
    class: CLASSES[Math.floor(code / 100)] ?? 'unknown',
    retryable: RETRYABLE.has(code),
    description: NOTES[code] ?? null,
  };
}

export function statuses(): StatusInfo[] {
  return Object.keys(STATUS_CODES)
    .map(Number)
    .sort((a, b) => a - b)
    .map(info);
}

export function status(raw: string): StatusInfo | undefined {
  if (!/^\d{3}$/.test(raw)) return undefined;
  const code = Number(raw);
  return STATUS_CODES[code] === undefined ? undefined : info(code);
}
