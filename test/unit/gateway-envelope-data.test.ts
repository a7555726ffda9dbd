import { describe, expect, it } from 'vitest';
import { envelopeDataJson, jsonValueEnd } from '../../gateway/envelope-data.js';
import { sendOkJson } from '../../gateway/respond.js';

const JSON_TYPE = 'application/json; charset=utf-8';

/** What the envelope held before the splice: the parsed value (or the text) re-serialised. */
function reference(body: Buffer, contentType: string | undefined): unknown {
  if (body.length === 0) return null;
  const text = body.toString('utf8');
  if (contentType?.includes('json')) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  return text;
}

function accepts(text: string): boolean {
  return jsonValueEnd(Buffer.from(text, 'utf8')) >= 0;
}

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

const VALID = [
  '{}',
  '[]',
  '0',
  '-0',
  '1.5e+10',
  '-12.25E-3',
  '"x"',
  '""',
  'true',
  'false',
  'null',
  ' \t\r\n{"a" : [1, 2, {"b": null}], "c": "d\\"e\\\\f\\/\\b\\f\\n\\r\\t\\u00e9\\uD83D\\uDE00"} \n',
  '{"a":{"b":{"c":[[[[]]]]}}}',
  '"é 😀 中文"',
  '[1,"two",true,false,null,{"x":-0.5e3}]',
  '12345678901234567890123',
];

const INVALID = [
  '',
  ' ',
  '{',
  '}',
  '[',
  '[1,]',
  '[,1]',
  '{"a":1,}',
  '{"a" 1}',
  '{a:1}',
  "{'a':1}",
  '01',
  '+1',
  '.5',
  '1.',
  '1e',
  '1e+',
  '-',
  '--1',
  '0x10',
  'NaN',
  'Infinity',
  'tru',
  'truex',
  'nul',
  '"unterminated',
  '"bad \\x escape"',
  '"bad \\u12 escape"',
  '"bad \\u12G4 escape"',
  '"raw\ncontrol"',
  '"tab\tinside"',
  '{} {}',
  '1 2',
  '[1] x',
  '\uFEFF{}',
  '[1}',
  '{"a":1]',
  '{"a"}',
  '{"a":}',
  '[1 2]',
  '"\\u00e9\\"',
];

describe('jsonValueEnd', () => {
  it('accepts every well-formed JSON text', () => {
    for (const text of VALID) {
      expect(parses(text), text).toBe(true);
      expect(accepts(text), text).toBe(true);
    }
  });

  it('refuses malformed text', () => {
    for (const text of INVALID) {
      expect(parses(text), text).toBe(false);
      expect(accepts(text), text).toBe(false);
    }
  });

  it('ends just past the value, before trailing whitespace', () => {
    expect(jsonValueEnd(Buffer.from('  {"a":1}\n\n'))).toBe(9);
    expect(jsonValueEnd(Buffer.from('12 '))).toBe(2);
  });

  it('never accepts what JSON.parse refuses (random mutations of valid texts)', () => {
    const alphabet = ['{', '}', '[', ']', '"', ':', ',', '\\', '0', '1', '-', '.', 'e', ' ', 'a', 'u', 'n', 't'];
    let seed = 42;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    for (let round = 0; round < 20_000; round++) {
      let text = VALID[random(VALID.length)]!;
      for (let m = random(3) + 1; m > 0; m--) {
        const at = random(text.length + 1);
        const op = random(3);
        const ch = alphabet[random(alphabet.length)]!;
        if (op === 0) text = text.slice(0, at) + ch + text.slice(at);
        else if (op === 1) text = text.slice(0, at) + text.slice(at + 1);
        else text = text.slice(0, at) + ch + text.slice(at + 1);
      }
      expect(accepts(text), text).toBe(parses(text));
    }
  });

  it('handles deep nesting without recursion', () => {
    const depth = 200_000;
    expect(jsonValueEnd(Buffer.from('['.repeat(depth) + ']'.repeat(depth)))).toBe(2 * depth);
    expect(jsonValueEnd(Buffer.from('['.repeat(depth) + ']'.repeat(depth - 1)))).toBe(-1);
  });
});

describe('envelopeDataJson', () => {
  it('passes a JSON upstream body through as its own bytes, whitespace around it dropped', () => {
    const body = Buffer.from(' {"price": 1.50, "big": 12345678901234567890123, "s": "\\u00e9"}\n');
    const out = envelopeDataJson(body, JSON_TYPE);
    expect(out).toBe('{"price": 1.50, "big": 12345678901234567890123, "s": "\\u00e9"}');
    expect(JSON.parse(out)).toEqual(reference(body, JSON_TYPE));
  });

  it('recognises any content type that says json', () => {
    expect(envelopeDataJson(Buffer.from('[1,2]'), 'application/problem+json')).toBe('[1,2]');
    expect(envelopeDataJson(Buffer.from('"x"'), 'text/json')).toBe('"x"');
  });

  it('turns an invalid JSON upstream body into a string', () => {
    for (const text of ['{"a":', 'not json', '{} {}', '\uFEFF{"a":1}']) {
      const out = envelopeDataJson(Buffer.from(text), JSON_TYPE);
      expect(JSON.parse(out)).toBe(text);
    }
  });

  it('decodes broken UTF-8 as JSON.parse saw it (replacement characters), never passing raw bytes', () => {
    const body = Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    const out = envelopeDataJson(body, JSON_TYPE);
    expect(out).toBe(JSON.stringify(reference(body, JSON_TYPE)));
    expect(JSON.parse(out)).toEqual({ a: '\uFFFD\uFFFD' });
  });

  it('sends a non-JSON body as a string', () => {
    const body = Buffer.from('{"looks":"like json"}');
    expect(envelopeDataJson(body, 'text/plain')).toBe(JSON.stringify('{"looks":"like json"}'));
    expect(envelopeDataJson(Buffer.from('<p>é</p>'), undefined)).toBe('"<p>é</p>"');
  });

  it('sends an empty body as null', () => {
    expect(envelopeDataJson(Buffer.alloc(0), JSON_TYPE)).toBe('null');
    expect(envelopeDataJson(Buffer.alloc(0), 'text/plain')).toBe('null');
    expect(envelopeDataJson(Buffer.alloc(0), undefined)).toBe('null');
  });

  it('passes a huge JSON body through unchanged', () => {
    const value = {
      items: Array.from({ length: 100_000 }, (_, i) => ({ id: i, name: `item ${i}`, tags: ['a', 'b'] })),
    };
    const text = JSON.stringify(value, null, 1);
    expect(text.length).toBeGreaterThan(5_000_000);
    const out = envelopeDataJson(Buffer.from(text), JSON_TYPE);
    expect(out).toBe(text);
    expect(JSON.parse(out)).toEqual(value);
  });

  it('agrees with JSON.parse on a huge invalid body', () => {
    const text = JSON.stringify(Array.from({ length: 200_000 }, (_, i) => i)).slice(0, -1);
    expect(JSON.parse(envelopeDataJson(Buffer.from(text), JSON_TYPE))).toBe(text);
  });
});

describe('sendOkJson', () => {
  function capture() {
    const sink = {
      headersSent: false,
      statusCode: 0,
      headers: {} as Record<string, unknown>,
      body: '',
      writeHead(status: number, headers: Record<string, unknown>) {
        sink.statusCode = status;
        sink.headers = headers;
        sink.headersSent = true;
      },
      end(payload: string) {
        sink.body = payload;
      },
      destroy() {},
    };
    return sink;
  }

  it('writes a valid envelope with the data spliced in and exact framing headers', () => {
    const sink = capture();
    const data = envelopeDataJson(Buffer.from('{"q":"é","n":[1,2]}'), JSON_TYPE);
    sendOkJson(sink, 'req_1', data, { request_id: 'req_1', billing: { price_cents: 3 } });
    expect(sink.statusCode).toBe(200);
    expect(sink.body).toBe(
      '{"ok":true,"data":{"q":"é","n":[1,2]},"meta":{"request_id":"req_1","billing":{"price_cents":3}}}',
    );
    expect(JSON.parse(sink.body)).toEqual({
      ok: true,
      data: { q: 'é', n: [1, 2] },
      meta: { request_id: 'req_1', billing: { price_cents: 3 } },
    });
    expect(sink.headers).toEqual({
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(sink.body),
      'Cache-Control': 'no-store',
      'X-Request-Id': 'req_1',
    });
  });

  it('writes null and string data', () => {
    const sink = capture();
    sendOkJson(sink, 'req_2', envelopeDataJson(Buffer.from('a "b"'), 'text/plain'), { request_id: 'r' });
    expect(JSON.parse(sink.body)).toEqual({ ok: true, data: 'a "b"', meta: { request_id: 'r' } });
    sendOkJson(sink, 'req_3', 'null', { request_id: 'r' });
    expect(sink.body).toBe('{"ok":true,"data":null,"meta":{"request_id":"r"}}');
  });
});
