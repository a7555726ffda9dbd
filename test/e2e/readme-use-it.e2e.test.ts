// The README's "Use it" from the command line, run as written (issue 22 acceptance): its first block starts the
// marketplace (`npm start` with the README's settings and arguments, on a fresh data directory), then every line of
// its second block runs through bash, one at a time, with `npx svc` from this checkout, and must exit 0. The only
// changes to a line are the ones the README names: `TOKEN` becomes the verification token mailed after the last
// `signup` (read from npm start's terminal, where the embedded mailer prints it), `svc_live_…` the key the last
// `keys create` printed; and this run's ports stand in for the default ones (`SVC_BASE_URL`/`SVC_GATEWAY_URL`, which
// the README names, and `127.0.0.1:3000` in an upstream URL), since the machine's 3000-3002 may be taken.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/env.js';
import { waitFor } from '../helpers/ports.js';
import { startProcess, stopAndRemove, type RunningProcess } from '../helpers/processes.js';

interface Run {
  line: string;
  code: number;
  stdout: string;
  stderr: string;
}

/** The sh blocks of the README's "From the command line" part of "Use it", as written. */
async function readmeBlocks(): Promise<string[]> {
  const readme = await readFile(path.join(ROOT, 'README.md'), 'utf8');
  const from = readme.indexOf('### From the command line');
  const to = readme.indexOf('### In a browser', from);
  expect(from, 'README: "### From the command line" under "## Use it"').toBeGreaterThan(readme.indexOf('## Use it'));
  return [...readme.slice(from, to).matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

/** Lines as a shell reads them: continuations joined, comments and blank lines dropped. */
function shellLines(block: string): string[] {
  return block
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .map((l) => stripComment(l).trim())
    .filter(Boolean);
}

/** A line without its `# comment` (a `#` after whitespace, outside quotes). */
function stripComment(line: string): string {
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]!))) return line.slice(0, i);
  }
  return line;
}

/** Every verification mail npm start printed: to whom, and its token (in order). */
function verificationTokens(output: string): { to: string; token: string }[] {
  const mails = output.split(/^-{72}\nMail to /m).slice(1);
  return mails.flatMap((m) => {
    const to = /^(\S+):/.exec(m)?.[1];
    const token = /^Verification token: (\S+)$/m.exec(m)?.[1];
    return to && token ? [{ to, token }] : [];
  });
}

describe('README "Use it": the command-line session runs verbatim on npm start', () => {
  let root: string;
  let home: string;
  let proc: RunningProcess;
  let commands: string[];
  const runs: Run[] = [];

  beforeAll(async () => {
    const [start, session] = await readmeBlocks();
    expect(start, 'the README block that starts the marketplace').toBeDefined();
    expect(session, 'the README block of svc commands').toBeDefined();
    // The start line: `NAME=value … npm start [-- args]`, run as such (on a data directory of its own).
    const [startLine, ...more] = shellLines(start!);
    expect(more).toEqual([]);
    const m = /^((?:[A-Z_]+=\S+\s+)*)npm start(?:\s+(.*))?$/.exec(startLine!);
    expect(m, `an npm start line: ${startLine}`).not.toBeNull();
    const env = Object.fromEntries(
      m![1]!
        .trim()
        .split(/\s+/)
        .filter(Boolean)
        .map((a) => a.split('=') as [string, string]),
    );
    commands = shellLines(session!);
    root = await mkdtemp(path.join(os.tmpdir(), 'mp-readme-'));
    home = path.join(root, 'home');
    proc = await startProcess({
      npmStart: true,
      npmArgs: m![2] ? m![2].split(/\s+/) : [],
      embeddedTemporal: true,
      env: { ...env, DATA_DIR: path.join(root, 'data') },
      readyTimeoutMs: 240_000,
    });
  }, 300_000);
  afterAll(() => stopAndRemove(proc, root), 60_000);

  /** The line with the README's substitutions made (see the file header). */
  async function substituted(line: string): Promise<string> {
    let out = line.replaceAll('http://127.0.0.1:3000', proc.urls.api);
    if (out.includes('TOKEN')) {
      const signup = [...runs].reverse().find((r) => /\bsignup --email /.test(r.line));
      const email = /--email (\S+)/.exec(signup?.line ?? '')?.[1];
      expect(email, `a signup before: ${line}`).toBeDefined();
      const token = await waitFor<string>(
        () => Promise.resolve(verificationTokens(proc.output()).findLast((t) => t.to === email)?.token),
        { timeoutMs: 15_000, intervalMs: 100, what: `the verification mail to ${email}` },
      );
      out = out.replace(/\bTOKEN\b/g, token);
    }
    if (out.includes('svc_live_…')) {
      const created = [...runs].reverse().find((r) => /\bkeys create\b/.test(r.line));
      const key = /svc_live_[A-Za-z0-9]{24}/.exec(created?.stdout ?? '')?.[0];
      expect(key, `a key printed before: ${line}`).toBeDefined();
      out = out.replaceAll('svc_live_…', key!);
    }
    return out;
  }

  function bash(line: string): Promise<Run> {
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: home,
      LANG: 'C.UTF-8',
      SVC_BASE_URL: proc.urls.api,
      SVC_GATEWAY_URL: proc.urls.gateway,
    };
    return new Promise((resolve) => {
      execFile('bash', ['-c', line], { cwd: ROOT, env, timeout: 60_000 }, (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        resolve({ line, code, stdout, stderr });
      });
    });
  }

  const shown = (r: Run) => `$ ${r.line}\nexit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
  const runOf = (needle: RegExp) => runs.find((r) => needle.test(r.line));

  it('every line exits 0, in order', { timeout: 600_000 }, async () => {
    expect(commands.length).toBeGreaterThan(10);
    for (const line of commands) {
      expect(line, 'each line runs the CLI as the README says').toMatch(/^npx svc /);
      const run = await bash(await substituted(line));
      runs.push({ ...run, line });
      expect(run.code, shown(run)).toBe(0);
    }
  });

  it('and each did what its comment says', () => {
    expect(runs.length, 'the session ran').toBe(commands.length);
    expect(runOf(/^npx svc search weather/)!.stdout).toMatch(/no: directory/);
    expect(runOf(/^npx svc api open-meteo/)!.stdout).toMatch(/Open-Meteo \(open-meteo\)[\s\S]*not callable here/);
    expect(runOf(/^npx svc verify-email/)!.stdout).toMatch(/scopes added:\s+billing:write, provider:write/);
    expect(runOf(/provider publish/)!.stdout).toMatch(/^status:\s+live$/m);
    expect(runOf(/search categories --callable/)!.stdout).toMatch(/^category-counts\s.*\syes\s/m);
    expect(runOf(/^npx svc quote/)!.stdout).toMatch(/^admission:\s+allowed$/m);
    const calls = runs.filter((r) => /^npx svc call /.test(r.line));
    expect(calls).toHaveLength(2);
    for (const call of calls) {
      expect(call.stderr).toContain('charged $0.05');
      expect(JSON.parse(call.stdout)).toMatchObject({ ok: true }); // the marketplace's own categories, as upstream
    }
    const agentRow = runOf(/^npx svc keys list/)!
      .stdout.split('\n')
      .find((l) => /\sagent\s/.test(l));
    // BUDGET $0.50, SPENT $0.05, DAILY $0.20, TODAY $0.05.
    expect(agentRow).toMatch(/\$0\.50\s+\$0\.05\s+\$0\.20\s+\$0\.05\s/);
    expect(runOf(/^npx svc checkout/)!.stdout).toMatch(/\/embedded-payments\/checkout\//);
  });
});
