/**
 * The scripts' side of the operator socket (./ops-protocol.ts): when the configuration is the embedded database and
 * a live process holds it (`npm start`), the command is handed to that process and its output and exit code are
 * relayed. When nobody holds it, or DATABASE_URL is set, the script runs the command on its own connection.
 */
import http from 'node:http';
import type { Config } from '../../core/config.js';
import { lockHolder } from '../../db/embedded.js';
import { opsSocketOf, type OpsCommand, type OpsLine } from './ops-protocol.js';

/** The instruction when the running process cannot take the command. */
export function unreachableMessage(pid: number, dataDir: string, reason: string): string {
  return (
    `error: process ${pid} holds the embedded database in ${dataDir} (a running "npm start"), but its operator ` +
    `socket ${opsSocketOf(dataDir)} did not answer (${reason}). Stop "npm start" (Ctrl-C in its terminal) and ` +
    'run this command again, or set DATABASE_URL to a shared Postgres for the marketplace and for this command.'
  );
}

type Streams = { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream };

/**
 * Sends the command; `onAnswer` runs when the running process takes it (before any output). Resolves with the exit
 * code once the process answers `{ exit }`.
 */
function send(socketPath: string, body: string, io: Streams, onAnswer: () => void) {
  return new Promise<number>((resolve, reject) => {
    const req = http.request(
      { socketPath, path: '/', method: 'POST', headers: { 'content-type': 'application/json' } },
      (res) => {
        if (res.statusCode === 200) onAnswer();
        let buffer = '';
        let exit: number | undefined;
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffer += chunk;
          let nl: number;
          while ((nl = buffer.indexOf('\n')) >= 0) {
            const line = buffer.slice(0, nl);
            buffer = buffer.slice(nl + 1);
            if (!line) continue;
            if (res.statusCode !== 200) continue;
            const msg = JSON.parse(line) as OpsLine;
            if ('stdout' in msg) io.stdout.write(msg.stdout);
            else if ('stderr' in msg) io.stderr.write(msg.stderr);
            else exit = msg.exit;
          }
        });
        res.on('end', () => {
          if (res.statusCode !== 200) reject(new Error(`HTTP ${res.statusCode}: ${buffer.trim()}`));
          else if (exit === undefined) reject(new Error('the running process closed the connection mid-command'));
          else resolve(exit);
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * When `npm start` holds the embedded database this command would open, runs the command in it and resolves with
 * its exit code; otherwise resolves undefined (the caller runs the command itself).
 */
export async function relayIfRunning(
  config: Config,
  command: OpsCommand,
  argv: string[],
  io: Streams = { stdout: process.stdout, stderr: process.stderr },
): Promise<number | undefined> {
  if (config.database.kind !== 'pglite') return undefined;
  const { dataDir } = config.database;
  const pid = await lockHolder(dataDir);
  if (pid === undefined) return undefined;
  const body = JSON.stringify({ command, argv, operator: process.env.USER ?? 'operator' });
  let answered = false;
  try {
    return await send(opsSocketOf(dataDir), body, io, () => {
      answered = true;
      io.stderr.write(`The marketplace is running (pid ${pid}): running this in it.\n`);
    });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    io.stderr.write(
      answered
        ? `error: the running marketplace (pid ${pid}) stopped answering (${e.message}): the command may or may not have finished; check before running it again.\n`
        : `${unreachableMessage(pid, dataDir, e.code ?? e.message)}\n`,
    );
    return 1;
  }
}
