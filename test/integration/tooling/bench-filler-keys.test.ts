// The gateway benchmark's memory row calls all 98,000 filler keys of the scale seed (bench/gateway/extended.ts): the
// seed stores each one's SHA-256 computed in SQL, the sweep's wrk script rebuilds its plaintext in Lua, and both must
// be the key the TypeScript form names, in the key format the gateway accepts.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { isApiKeyFormat } from '../../../core/auth/bearer.js';
import { displayPrefix, hashKey } from '../../../core/keys/key-material.js';
import { FILLER_PLAINTEXT_SQL, FILLER_TAIL, fillerKeyPlaintext, sweepScript } from '../../../bench/gateway/extended.js';
import { PG_ADMIN_URL } from '../../helpers/env.js';

describe('the scale seed’s filler keys', () => {
  it('are API keys in the gateway’s format, with display prefixes unique per number', () => {
    for (const g of [1, 42, 98_000]) expect(isApiKeyFormat(fillerKeyPlaintext(g))).toBe(true);
    expect(displayPrefix(fillerKeyPlaintext(1))).not.toBe(displayPrefix(fillerKeyPlaintext(2)));
  });

  it('have the same plaintext and SHA-256 in SQL as in TypeScript', async () => {
    const db = new pg.Client({ connectionString: PG_ADMIN_URL });
    await db.connect();
    try {
      const { rows } = await db.query<{ g: number; plaintext: string; hash: string }>(
        `select g, ${FILLER_PLAINTEXT_SQL} as plaintext,
                encode(sha256(convert_to(${FILLER_PLAINTEXT_SQL}, 'UTF8')), 'hex') as hash
           from unnest(array[1, 7, 98000]) g`,
      );
      expect(rows).toHaveLength(3);
      for (const r of rows) {
        expect(r.plaintext).toBe(fillerKeyPlaintext(r.g));
        expect(r.hash).toBe(hashKey(fillerKeyPlaintext(r.g)));
      }
    } finally {
      await db.end();
    }
  });

  it('are rebuilt by the sweep script from its number, starting where it is told', () => {
    const script = sweepScript(['a', 'b'], 501, 10);
    expect(script).toContain('local g = 501 + (i % 10)');
    expect(script).toContain(`string.format("%08d", g) .. "${FILLER_TAIL}"`);
    expect(script).toContain('"Bearer svc_live_"');
  });
});
