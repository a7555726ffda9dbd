/**
 * The create form's endpoint list: one endpoint per line, `METHOD /path [price] [summary]`, the price in dollars
 * (`0.05`, `$1`); blank lines and lines starting with `#` are skipped. The result is the `endpoints` input of
 * POST /v1/provider/apis, so the same schema checks methods, paths and duplicates afterwards.
 */
import { ValidationError } from '../../../core/errors.js';
import { dollarsToCents } from './provider-forms.js';

export interface EndpointLine {
  method: string;
  path: string;
  price_cents?: number;
  summary?: string;
}

const PRICE_LIKE = /^-?\$?\d/;

export function parseEndpointLines(text: string): EndpointLine[] {
  const out: EndpointLine[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    const [method, path, ...rest] = line.split(/\s+/);
    if (!path) {
      throw new ValidationError(`endpoints line ${i + 1}: write "METHOD /path", like "GET /forecast/{city} 0.05".`);
    }
    const endpoint: EndpointLine = { method: method!, path };
    if (rest[0] !== undefined && PRICE_LIKE.test(rest[0])) {
      endpoint.price_cents = dollarsToCents(rest.shift()!, `endpoints line ${i + 1} price`);
    }
    if (rest.length) endpoint.summary = rest.join(' ');
    out.push(endpoint);
  });
  return out;
}
