// Operator commands while `npm start` runs on the embedded database (issue 22 item 4): PGlite takes one client and
// the running marketplace owns it, so `npm run admin` and `npm run catalog:import` hand their command to it over its
// operator socket and relay the answer. When the owner cannot take it, the error says exactly what to do.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/env.js';
import { describe as show, http } from '../helpers/http.js';
import { startProcess, stopAndRemove, type RunningProcess } from '../helpers/processes.js';

const exec = promisify(execFile);

/** `npm run <script> -- <args>` as an operator types it, on the embedded database in `dataDir`. */
async function npmRun(dataDir: string, script: string, ...args: string[]) {
  const env: Record<string, string | undefined> = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'TEMPORAL_ADDRESS']) delete env[name];
  try {
    const { stdout, stderr } = await exec('npm', ['run', '--silent', script, '--', ...args], {
      cwd: ROOT,
      env,
      timeout: 90_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** A two-entry directory file in the public-apis format, with a name no other listing has. */
const DIRECTORY = [
  {
    name: 'Zanzibar Tide Tables',
    url: 'https://tides.example.org/',
    description: 'High and low tide times for the harbours of Zanzibar',
    category: 'Environment',
    auth: '',
    https: true,
    cors: 'yes',
  },
  {
    name: 'Quokka Sightings',
    url: 'https://quokka.example.org/',
    description: 'Where quokkas were seen on Rottnest Island',
    category: 'Animals',
    auth: 'apiKey',
    https: true,
    cors: 'no',
  },
];

describe('operator commands while npm start runs on the embedded database', () => {
  let root: string;
  let dataDir: string;
  let proc: RunningProcess;

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'mp-ops-'));
    dataDir = path.join(root, 'data');
    proc = await startProcess({
      npmStart: true,
      embeddedTemporal: true,
      env: { DATA_DIR: dataDir },
      readyTimeoutMs: 180_000,
    });
  }, 240_000);
  afterAll(() => stopAndRemove(proc, root), 60_000);

  it('grants credits and imports the catalog through the running process; the books stay balanced', async () => {
    const socket = `${path.join(dataDir, 'pglite')}.ops.sock`;
    expect((await stat(socket)).mode & 0o777).toBe(0o600);

    const reg = await http(proc.urls.api, 'POST', '/v1/register');
    expect(reg.status, show(reg)).toBe(201);
    const { org_id: orgId, api_key: key } = reg.body.data as { org_id: string; api_key: string };

    const grant = await npmRun(dataDir, 'admin', 'grant-credits', orgId, '500', '--reason', 'test');
    expect(grant.code, grant.stderr).toBe(0);
    expect(grant.stderr).toMatch(/^The marketplace is running \(pid \d+\): running this in it\.$/m);
    expect(grant.stderr.match(/The marketplace is running/g)).toHaveLength(1);
    expect(JSON.parse(grant.stdout)).toMatchObject({ ok: true, balance_after_cents: 500, replayed: false });
    // The audit line is relayed on stderr, as when the script runs the command itself.
    expect(grant.stderr).toMatch(/"action":"grant-credits".*"reason":"test"/);

    const balance = await http(proc.urls.api, 'GET', '/v1/billing/balance', { token: key });
    expect(balance.status, show(balance)).toBe(200);
    expect(balance.body.data).toMatchObject({ credit_cents: 500 });

    const file = path.join(root, 'directory', 'public-apis.json');
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, JSON.stringify(DIRECTORY));
    const imported = await npmRun(dataDir, 'catalog:import', file);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stderr).toContain('The marketplace is running');
    const report = JSON.parse(/^\{\n[\s\S]*\n\}$/m.exec(imported.stdout)![0]) as Record<string, unknown>;
    expect(report).toMatchObject({ file, entries: 2, inserted: 2 });

    const found = await http(proc.urls.api, 'GET', `/v1/search?q=${encodeURIComponent('zanzibar tide')}&limit=5`);
    expect(found.status, show(found)).toBe(200);
    expect((found.body.data as { name: string }[]).map((l) => l.name)).toContain('Zanzibar Tide Tables');

    // The books: every org's cached balance equals its ledger sum, checked by the running process itself.
    const books = await npmRun(dataDir, 'admin', 'reconcile');
    expect(books.code, books.stdout + books.stderr).toBe(0);
    expect(JSON.parse(books.stdout)).toMatchObject({ ok: true });

    // Bad usage is answered by the running process as by the script: exit 2 and the usage.
    const bad = await npmRun(dataDir, 'admin', 'grant-credits', orgId, 'lots', '--reason', 'x');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('error: grant-credits needs an org and a non-zero integer of cents');
    expect(bad.stderr).toContain('usage: npm run admin -- <command>');

    // Migrations: `npm start` applied them at start.
    const migrate = await npmRun(dataDir, 'db:migrate');
    expect(migrate.code, migrate.stderr).toBe(0);
    expect(migrate.stdout).toContain('"npm start" applied every migration when it started');
  }, 180_000);

  it('when the owner of the embedded database does not answer, the error says exactly what to do', async () => {
    // A live process (this test's) holds the lock of another data folder, with no operator socket.
    const other = path.join(root, 'held');
    await mkdir(other, { recursive: true });
    await writeFile(path.join(other, 'pglite.lock'), String(process.pid));
    for (const [script, args] of [
      ['admin', ['grant-credits', 'org_x', '500', '--reason', 'test']],
      ['catalog:import', []],
    ] as const) {
      const res = await npmRun(other, script, ...args);
      expect(res.code, res.stderr).toBe(1);
      expect(res.stderr).toContain(
        `error: process ${process.pid} holds the embedded database in ${path.join(other, 'pglite')} (a running ` +
          `"npm start"), but its operator socket ${path.join(other, 'pglite')}.ops.sock did not answer (ENOENT). ` +
          'Stop "npm start" (Ctrl-C in its terminal) and run this command again, or set DATABASE_URL to a shared ' +
          'Postgres for the marketplace and for this command.',
      );
      expect(res.stdout).toBe('');
    }
  }, 60_000);
});
