// Keys are stored only as SHA-256 plus a display prefix: a full dump of the database after registration holds
// neither the plaintext key nor its secret part, and the logs do not either.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../../api/app.js';
import { sha256Hex } from '../../../core/crypto.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { http, serve } from '../../helpers/http.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';

describe('secrets at rest', () => {
  let stack: TestStack;
  let server: RunningHttpServer;

  beforeAll(async () => {
    stack = await createTestStack();
    server = await serve(createApiApp(stack.services).callback());
  });
  afterAll(async () => {
    await server.close();
    await stack.close();
  });

  it('pg_dump after register and /v1/me finds no plaintext key, only its hash', async () => {
    const keys: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await http(server.url, 'POST', '/v1/register');
      keys.push(res.body.data.api_key as string);
      expect((await http(server.url, 'GET', '/v1/me', { token: res.body.data.api_key })).status).toBe(200);
    }
    const { stdout: dump } = await promisify(execFile)('pg_dump', ['--data-only', '--inserts', stack.db.url], {
      maxBuffer: 64 * 1024 * 1024,
    });
    expect(dump).toContain('INSERT INTO public.api_keys');
    for (const key of keys) {
      const secretPart = key.slice(17); // what the display prefix does not show
      expect(dump).not.toContain(key);
      expect(dump).not.toContain(secretPart);
      expect(dump).toContain(sha256Hex(key));
      expect(stack.logs.text()).not.toContain(secretPart);
    }
  });
});
