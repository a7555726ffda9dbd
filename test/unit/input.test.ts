import { describe, expect, it } from 'vitest';
import { AppError } from '../../core/errors.js';
import { checkJson, checkPath, checkQuery, checkSearch, checkText, isBadText } from '../../core/input.js';

function refusal(fn: () => void): { status: number; code: string; message: string; details: unknown } | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    const e = err as AppError;
    return { status: e.status, code: e.code, message: e.message, details: e.details };
  }
}

describe('input rule', () => {
  it.each([
    ['a\u0000b', true],
    ['\u0000', true],
    ['\uD800', true], // lone high surrogate
    ['x\uDC00', true], // lone low surrogate
    ['\uDC00\uD800', true], // a pair in the wrong order is two lone halves
    ['a\uD83D', true], // high surrogate at the end
    ['', false],
    ['plain ascii', false],
    ['ünïcödé 日本', false],
    ['\uD83D\uDE00', false], // an emoji: a proper pair
    ['a\uD83D\uDE00\uD83D\uDE00b', false],
    ['\u0001\u001f\u007f', false], // other control characters are the schemas' business
  ])('isBadText(%j) is %s', (text, bad) => {
    expect(isBadText(text)).toBe(bad);
  });

  it('refuses with 400 validation_failed naming where', () => {
    expect(refusal(() => checkText('a\u0000', 'query.q'))).toEqual({
      status: 400,
      code: 'validation_failed',
      message: 'Invalid query.q: text must not contain NUL characters or unpaired UTF-16 surrogates.',
      details: {
        issues: [{ path: 'query.q', message: 'Text must not contain NUL characters or unpaired UTF-16 surrogates.' }],
      },
    });
    expect(refusal(() => checkText('fine', 'query.q'))).toBeUndefined();
  });

  it('walks JSON values and keys, at any depth, without recursion', () => {
    expect(refusal(() => checkJson({ a: [1, null, true, { b: 'ok' }], c: 'ok' }))).toBeUndefined();
    expect(refusal(() => checkJson({ a: [1, { b: 'x\u0000' }] }))?.message).toMatch(/^Invalid body\.a\.1\.b: /);
    expect(refusal(() => checkJson({ 'k\u0000': 1 }))?.message).toMatch(/^Invalid body \(a key\): /);
    expect(refusal(() => checkJson(['\uD800']))?.message).toMatch(/^Invalid body\.0: /);
    expect(refusal(() => checkJson('\u0000'))?.status).toBe(400);
    let deep: unknown = 'x\u0000';
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(refusal(() => checkJson(deep))?.status).toBe(400);
  });

  it('checks query names and values, repeated values too', () => {
    expect(refusal(() => checkQuery({ q: 'ok', tags: ['a', 'b'] }))).toBeUndefined();
    expect(refusal(() => checkQuery({ tags: ['a', 'b\u0000'] }))?.message).toMatch(/^Invalid query\.tags: /);
    expect(refusal(() => checkQuery({ 'a\u0000': '1' }))?.message).toMatch(/^Invalid query \(a parameter name\): /);
    expect(refusal(() => checkSearch('?a=1&a=%00'))?.message).toMatch(/^Invalid query\.a: /);
    expect(refusal(() => checkSearch('?%00=1'))?.status).toBe(400);
    expect(refusal(() => checkSearch('?a=%F0%9F%98%80&b=%FF'))).toBeUndefined(); // bad UTF-8 decodes to U+FFFD
  });

  it('checks path segments as a router decodes them', () => {
    expect(refusal(() => checkPath('/v1/apis/%00'))?.message).toMatch(/^Invalid path: /);
    expect(refusal(() => checkPath('/v1/apis/a%00b/x'))?.status).toBe(400);
    expect(refusal(() => checkPath('/v1/apis/sky%20data/%F0%9F%98%80'))).toBeUndefined();
    // Malformed escapes do not decode, so the router keeps them encoded: nothing to refuse here.
    expect(refusal(() => checkPath('/v1/apis/%E0%A4%A'))).toBeUndefined();
    expect(refusal(() => checkPath('/v1/apis/%ED%A0%80'))).toBeUndefined(); // an encoded surrogate is invalid UTF-8
  });
});
