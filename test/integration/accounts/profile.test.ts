// The org profile and avatar: fields, validation, slug uniqueness, magic-byte image typing, size limit, serving.
import { once } from 'node:events';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../../api/app.js';
import { CONSUMER_SCOPES, VERIFIED_EXTRA_SCOPES } from '../../../core/auth/scopes.js';
import { newId } from '../../../core/ids.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { Org } from '../../../db/entities/index.js';
import { expectFailure, http, serve, describe as show, type HttpResult } from '../../helpers/http.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64, 1)]);
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(64, 2)]);
const WEBP = Buffer.concat([
  Buffer.from('RIFF'),
  Buffer.from([0x20, 0, 0, 0]),
  Buffer.from('WEBPVP8 '),
  Buffer.alloc(64, 3),
]);
const GIF = Buffer.concat([Buffer.from('GIF89a'), Buffer.alloc(64, 4)]);

describe('profile', () => {
  let stack: TestStack;
  let server: RunningHttpServer;
  let base: string;
  let key: string; // a verified-style key with provider:write
  let consumerKey: string;

  async function keyFor(scopes: readonly string[]): Promise<string> {
    const em = stack.services.orm.em.fork();
    const org = em.create(Org, { id: newId('org'), kind: 'standard' });
    const { plaintext } = stack.services.keys.create(em, {
      orgId: org.id,
      name: 'k',
      scopes: scopes as never,
      source: 'signup',
    });
    await em.flush();
    return plaintext;
  }

  beforeAll(async () => {
    stack = await createTestStack({ env: { PUBLIC_BASE_URL: 'https://market.example.com' } });
    server = await serve(createApiApp(stack.services).callback());
    base = server.url;
    key = await keyFor([...CONSUMER_SCOPES, ...VERIFIED_EXTRA_SCOPES]);
    consumerKey = await keyFor(CONSUMER_SCOPES);
  });
  afterAll(async () => {
    // Every money test file ends with the books consistent (each org's cached balance = its ledger sum).
    expect(await stack.services.ledger.findDrift()).toEqual([]);
    await server.close();
    await stack.close();
  });

  /** POST an avatar with the verified key, declared as `type`. */
  const upload = (rawBody: string | Buffer, type = 'image/png') =>
    http(base, 'POST', '/v1/me/avatar', { token: key, rawBody, headers: { 'content-type': type } });
  const expectTooBig = (res: HttpResult) => {
    expectFailure(res, 413, 'validation_failed');
    expect(res.body.error.details).toEqual({ limit_bytes: 2 * 1024 * 1024 });
  };

  it('starts empty and returns public and private fields to the owner', async () => {
    const res = await http(base, 'GET', '/v1/me/profile', { token: key });
    expect(res.status, show(res)).toBe(200);
    expect(res.body.data).toEqual({
      org_id: expect.stringMatching(/^org_/),
      display_name: null,
      slug: null,
      bio: null,
      website: null,
      avatar_url: null,
      contact_email: null,
      contact_phone: null,
      updated_at: null,
    });
  });

  it('updates the fields it defines and keeps the others', async () => {
    const res = await http(base, 'PATCH', '/v1/me/profile', {
      token: key,
      body: {
        display_name: 'Weather Co',
        slug: 'weather-co',
        bio: 'Forecasts.',
        website: 'https://weather.example',
        contact_email: 'Ops@Weather.example',
        contact_phone: '+1 555 0100',
      },
    });
    expect(res.status, show(res)).toBe(200);
    expect(res.body.data).toMatchObject({
      display_name: 'Weather Co',
      slug: 'weather-co',
      contact_email: 'ops@weather.example',
      contact_phone: '+1 555 0100',
    });
    const partial = await http(base, 'PATCH', '/v1/me/profile', { token: key, body: { bio: null } });
    expect(partial.body.data).toMatchObject({ display_name: 'Weather Co', bio: null });
  });

  it('refuses invalid, unknown and forbidden fields with 400 and changes nothing', async () => {
    const before = (await http(base, 'GET', '/v1/me/profile', { token: key })).body.data;
    for (const body of [
      {},
      { slug: 'Has Caps' },
      { slug: '-edge' },
      { slug: 'admin' },
      { website: 'javascript:alert(1)' },
      { contact_email: 'nope' },
      { display_name: 'x'.repeat(81) },
      { credit_cents: 100 },
      { org_id: 'org_x' },
      { scopes: ['provider:write'] },
      { display_name: 'ok', extra: true },
    ]) {
      expectFailure(await http(base, 'PATCH', '/v1/me/profile', { token: key, body }), 400, 'validation_failed');
    }
    expect((await http(base, 'GET', '/v1/me/profile', { token: key })).body.data).toEqual(before);
  });

  it('answers a taken slug with 409', async () => {
    const other = await keyFor([...CONSUMER_SCOPES, ...VERIFIED_EXTRA_SCOPES]);
    const res = await http(base, 'PATCH', '/v1/me/profile', { token: other, body: { slug: 'weather-co' } });
    expectFailure(res, 409, 'conflict');
  });

  it('needs provider:write to change the profile', async () => {
    const res = await http(base, 'PATCH', '/v1/me/profile', { token: consumerKey, body: { bio: 'x' } });
    expectFailure(res, 403, 'forbidden');
    expect(res.body.error.details).toEqual({ missing_scope: 'provider:write' });
  });

  it.each([
    ['png', PNG, 'image/png'],
    ['jpeg', JPEG, 'image/jpeg'],
    ['webp', WEBP, 'image/webp'],
  ])('accepts a %s avatar judged by its bytes and serves it back with its type', async (_name, bytes, type) => {
    // The declared Content-Type is deliberately wrong: only the bytes count.
    const res = await upload(bytes, 'application/octet-stream');
    expect(res.status, show(res)).toBe(200);
    const url: string = res.body.data.avatar_url;
    expect(url).toMatch(/^https:\/\/market\.example\.com\/v1\/avatars\/avt_[0-9a-z]{26}\.(png|jpg|webp)$/);
    expect(res.body.data.profile.avatar_url).toBe(url);
    const served = await fetch(base + new URL(url).pathname);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe(type);
    expect(served.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Buffer.from(await served.arrayBuffer())).toEqual(bytes);
    const etag = served.headers.get('etag')!;
    expect((await fetch(base + new URL(url).pathname, { headers: { 'if-none-match': etag } })).status).toBe(304);
  });

  it('refuses other formats with 415 and an empty body with 400', async () => {
    expectFailure(await upload(GIF, 'image/gif'), 415, 'unsupported_media_type');
    expectFailure(await upload('hello'), 415, 'unsupported_media_type');
    expectFailure(await upload(''), 400, 'validation_failed');
  });

  it('refuses an image over 2 MB with 413 validation_failed, declared or streamed', async () => {
    const big = Buffer.concat([PNG, Buffer.alloc(2 * 1024 * 1024)]);
    expectTooBig(await upload(big));
    // Chunked upload (no Content-Length): refused while reading.
    const stream = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 3; i++) controller.enqueue(new Uint8Array(1024 * 1024));
        controller.close();
      },
    });
    const chunked = await fetch(`${base}/v1/me/avatar`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'image/png' },
      body: stream,
      duplex: 'half',
    });
    expect(chunked.status).toBe(413);
    expect(chunked.headers.get('connection')).toBe('close');
    // The refused upload must not poison the client's pooled connections.
    const next = await fetch(`${base}/v1/me/profile`, {
      headers: { authorization: `Bearer ${key}` },
      signal: AbortSignal.timeout(5_000),
    });
    expect(next.status).toBe(200);
    // An exactly-2 MB image is fine.
    const max = Buffer.concat([PNG.subarray(0, 8), Buffer.alloc(2 * 1024 * 1024 - 8)]);
    expect((await upload(max)).status).toBe(200);
  });

  it('a standard fetch uploading 3 MB reads the 413 validation_failed envelope, not a network error', async () => {
    const three = Buffer.concat([PNG, Buffer.alloc(3 * 1024 * 1024)]);
    for (let i = 0; i < 3; i++) {
      // Declared length: refused before the body is read, then the upload is drained so the client reads the answer.
      expectTooBig(await upload(three));
    }
    const chunked = await fetch(`${base}/v1/me/avatar`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'image/png' },
      body: new Blob([three]).stream(),
      duplex: 'half',
    });
    expect(chunked.status).toBe(413);
    expect(((await chunked.json()) as { error: { code: string } }).error.code).toBe('validation_failed');
  });

  it('keeps reading a refused 3 MB upload until it ends, then answers 413 (the client is never cut off mid-write)', async () => {
    // A client that writes its whole body before reading, at its own pace: the connection must stay open until the
    // last byte is written, or the client sees EPIPE / a reset instead of the answer.
    const { hostname, port } = new URL(base);
    const socket = connect(Number(port), hostname);
    await once(socket, 'connect');
    const received: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    let closedAt: number | undefined;
    const closed = once(socket, 'close');
    socket.on('close', () => (closedAt ??= written));
    let written = 0;
    const total = 3 * 1024 * 1024;
    const write = (data: Buffer | string) =>
      new Promise<void>((resolve, reject) => socket.write(data, (err) => (err ? reject(err) : resolve())));
    await write(
      `POST /v1/me/avatar HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${key}\r\n` +
        `Content-Type: image/png\r\nContent-Length: ${total}\r\n\r\n`,
    );
    const chunk = Buffer.alloc(64 * 1024, 7);
    while (written < total) {
      await write(chunk);
      written += chunk.length;
      await new Promise((r) => setTimeout(r, 2));
    }
    await closed;
    expect(closedAt, 'the server closed the connection before the upload ended').toBe(total);
    const text = Buffer.concat(received).toString('utf8');
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))).toMatchObject({
      ok: false,
      error: { code: 'validation_failed', details: { limit_bytes: 2 * 1024 * 1024 } },
    });
  });

  it('answers 404 for unknown avatar ids', async () => {
    expectFailure(await http(base, 'GET', '/v1/avatars/avt_00000000000000000000000000.png'), 404, 'not_found');
    expectFailure(await http(base, 'GET', '/v1/avatars/../../etc/passwd'), 404, 'not_found');
  });
});
