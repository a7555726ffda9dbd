/**
 * The create form's endpoint list: one endpoint per line, `METHOD /path [price] [summary]`, the price in dollars
 * (`0.05`, `$1`); blank lines and lines starting with `#` are skipped. The result is the `endpoints` input of
 * POST /v1/provider/apis, so the same schema checks methods and paths afterwards; a refusal names the textarea's line
 * as the person counts it (from 1, blank and comment lines included), never the list's index.
 */
import { fieldError, type FieldSpec } from '../form-errors.js';
import { dollarsToCents } from './provider-forms.js';

export interface EndpointLine {
  method: string;
  path: string;
  price_cents?: number;
  summary?: string;
}

/** The endpoints a textarea lists, and for each the line (from 1) it was written on. */
export interface EndpointLines {
  endpoints: EndpointLine[];
  lineOf: number[];
}

const PRICE_LIKE = /^-?\$?\d/;
/** The textarea's input id (its messages show beside it). */
export const ENDPOINTS_FIELD = 'endpoints';
const PARTS: Record<string, string> = { method: 'method', path: 'path', price_cents: 'price', summary: 'summary' };

/** Read the lines; a line that is not `METHOD /path …`, a bad price or a repeated method and path is refused by line. */
export function readEndpointLines(text: string): EndpointLines {
  const out: EndpointLines = { endpoints: [], lineOf: [] };
  const seen = new Map<string, number>();
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    const label = `Endpoints, line ${i + 1}`;
    if (!line || line.startsWith('#')) return;
    const [method, path, ...rest] = line.split(/\s+/);
    if (!path) throw fieldError(ENDPOINTS_FIELD, label, 'write "METHOD /path", like "GET /forecast/{city} 0.05"');
    const endpoint: EndpointLine = { method: method!, path };
    if (rest[0] !== undefined && PRICE_LIKE.test(rest[0])) {
      endpoint.price_cents = dollarsToCents(rest.shift()!, `${label}, price`, ENDPOINTS_FIELD);
    }
    if (rest.length) endpoint.summary = rest.join(' ');
    const key = `${method!.toUpperCase()} ${path}`;
    const first = seen.get(key);
    if (first !== undefined) throw fieldError(ENDPOINTS_FIELD, label, `${key} is already on line ${first}`);
    seen.set(key, i + 1);
    out.endpoints.push(endpoint);
    out.lineOf.push(i + 1);
  });
  return out;
}

export function parseEndpointLines(text: string): EndpointLine[] {
  return readEndpointLines(text).endpoints;
}

/** How the schema's `endpoints.<index>.<part>` issues are named: the textarea's line, and the part. */
export function endpointsField(lineOf: readonly number[]) {
  return (rest: readonly PropertyKey[]): FieldSpec => {
    const [index, part] = rest;
    if (typeof index !== 'number') return { id: ENDPOINTS_FIELD, label: 'Endpoints' };
    const line = `Endpoints, line ${lineOf[index] ?? index + 1}`;
    return {
      id: ENDPOINTS_FIELD,
      label: part === undefined ? line : `${line}, ${PARTS[String(part)] ?? String(part)}`,
    };
  };
}
