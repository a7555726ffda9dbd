// `svc provider` after an API exists (issue 31), as a black box (spawned `node bin/svc.js`, a signed-in provider's
// profile): endpoints add/update/remove/import, a live API's revision show/discard and publish, archive, restore,
// delete; `svc provider publish` prints the smoke test as a table, and a refused one shows the failed check with the
// host and port it tried.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { startFullStack, type FullStack } from '../../helpers/full-stack.js';
import { runSvc, shownRun as shown, type SvcRun } from '../../helpers/svc-cli.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';

const DOC = JSON.stringify({
  openapi: '3.1.0',
  info: { title: 'T', version: '1' },
  paths: {
    '/x': { get: { summary: 'Get x', responses: { 200: { description: 'ok' } } } },
    '/y': { get: { summary: 'Get y', responses: { 200: { description: 'ok' } } } },
  },
});

describe('svc provider: endpoints, revisions, retirement', { timeout: 180_000 }, () => {
  let s: FullStack;
  let upstream: Upstream;
  let provider: Person;
  let home: string;
  let profile: string;

  beforeAll(async () => {
    upstream = await startUpstream((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(req.url === '/openapi.json' ? DOC : '{"ok":true}');
    });
    s = await startFullStack({ schedules: false, env: { UPSTREAM_ALLOW_PRIVATE: 'true' } });
    provider = await createPerson(s.services);
    home = mkdtempSync(path.join(tmpdir(), 'svc-prov-'));
    profile = path.join(home, 'p', 'config.json');
    mkdirSync(path.dirname(profile), { recursive: true });
    writeFileSync(profile, JSON.stringify({ base_url: s.base, session_token: provider.session }));
  });
  afterAll(async () => {
    rmSync(home, { recursive: true, force: true });
    await s?.close();
    await upstream?.close();
  });

  const svc = (...args: string[]): Promise<SvcRun> =>
    runSvc(['provider', ...args], { HOME: home, SVC_CONFIG: profile, SVC_BASE_URL: s.base });
  const ok = async (...args: string[]) => {
    const r = await svc(...args);
    expect(r.code, shown(r)).toBe(0);
    return r.stdout;
  };
  const target = () => `127\\.0\\.0\\.1:${upstream.port}`;

  it('changes a draft, publishes with a table of checks, stages and publishes a revision, archives, restores', async () => {
    await ok(
      'create',
      '--name',
      'Cli Changes',
      '--slug',
      'cli-chg',
      '--summary',
      's',
      '--upstream',
      upstream.url,
      '--endpoint',
      'GET /a=2',
    );
    const added = await ok('endpoints', 'add', 'cli-chg', 'GET', '/b', '--price', '3', '--summary', 'Bee');
    expect(added).toMatch(/^Endpoints: 1 added\.$/m);
    const b = /^added\s+(\S+)\s+GET\s+\/b\s+\$0\.03\s+-$/m.exec(added)![1]!;
    const moved = await ok('endpoints', 'update', 'cli-chg', b, '--path', '/b2');
    expect(moved).toMatch(new RegExp(`^removed\\s+${b}\\s+GET\\s+/b\\s+-\\s+deleted$`, 'm'));
    const b2 = /^added\s+(\S+)\s+GET\s+\/b2\s+\$0\.03\s+-$/m.exec(moved)![1]!;

    const published = await ok('publish', 'cli-chg', '--accept-terms');
    expect(published).toMatch(/^status:\s+live$/m);
    expect(published).toMatch(/^result:\s+Verification passed: 2 checks at 127\.0\.0\.1:\d+ answered 2xx\. Published/m);
    expect(published).toMatch(/^RESULT\s+ENDPOINT\s+TARGET\s+STATUS\s+MS\s+ERROR$/m);
    expect(published).toMatch(new RegExp(`^ok\\s+GET /a\\s+${target()}\\s+200\\s+\\d+\\s+-$`, 'm'));
    expect(published).toMatch(new RegExp(`^ok\\s+GET /b2\\s+${target()}\\s+200\\s+\\d+\\s+-$`, 'm'));

    const staged = await ok('endpoints', 'add', 'cli-chg', 'GET', '/c');
    expect(staged).toContain('staged in revision 1');
    const shownRevision = await ok('revision', 'show', 'cli-chg');
    expect(shownRevision).toMatch(/^revision:\s+1 \(rev_\S+\)$/m);
    expect(shownRevision).toMatch(/^add\s+\S+\s+GET \/c\s+\$0\.00$/m);
    expect(await ok('revision', 'discard', 'cli-chg')).toMatch(/^status:\s+discarded$/m);
    expect((await svc('revision', 'show', 'cli-chg')).stderr).toMatch(/^not_found: /);

    expect(await ok('endpoints', 'remove', 'cli-chg', b2)).toMatch(
      new RegExp(`^removed\\s+${b2}\\s+GET\\s+/b2\\s+-\\s+staged$`, 'm'),
    );
    const revised = await ok('publish', 'cli-chg', '--accept-terms');
    expect(revised).toMatch(/^action:\s+publish_revision$/m);
    expect(await ok('apis', 'cli-chg')).not.toContain('/b2');

    const notDeleted = await svc('delete', 'cli-chg');
    expect(notDeleted.code, shown(notDeleted)).toBe(1);
    expect(notDeleted.stderr).toMatch(/^conflict: .*archive it/);
    expect((await svc('archive', 'cli-chg')).stderr).toMatch(/^conflict: .*unpublish it first/);
    await ok('unpublish', 'cli-chg');
    expect(await ok('archive', 'cli-chg')).toMatch(/^status:\s+archived$/m);
    expect(await ok('restore', 'cli-chg')).toMatch(/^status:\s+draft$/m);
  });

  it('re-imports and deletes a draft; a refused publish shows the failed check and its host:port', async () => {
    await ok(
      'create',
      '--name',
      'Imp',
      '--slug',
      'cli-imp',
      '--summary',
      's',
      '--upstream',
      upstream.url,
      '--endpoint',
      'GET /x=1',
    );
    const imported = await ok('endpoints', 'import', 'cli-imp', `${upstream.url}/openapi.json`);
    expect(imported).toMatch(/^Endpoints: 1 added, 1 changed\.$/m);
    expect(imported).toMatch(/^changed\s+\S+\s+GET\s+\/x\s+\$0\.01\s+-$/m);
    expect(await ok('delete', 'cli-imp')).toMatch(/^Deleted cli-imp \(api_\S+\)\.$/m);

    await ok(
      'create',
      '--name',
      'Bad',
      '--slug',
      'cli-bad',
      '--summary',
      's',
      '--upstream',
      'http://127.0.0.1:9',
      '--endpoint',
      'GET /health',
    );
    const refused = await svc('publish', 'cli-bad', '--accept-terms');
    expect(refused.code, shown(refused)).toBe(1);
    expect(refused.stderr).toMatch(/^FAILED\s+GET \/health\s+127\.0\.0\.1:9\s+-\s+-\s+\S.*127\.0\.0\.1:9/m);
    expect(refused.stderr).toMatch(
      /^verification_failed: Verification failed at 127\.0\.0\.1:9: GET \/health: .* The API was not published\.$/m,
    );
  });
});
