/**
 * The operator socket of a running marketplace on the embedded database (protocol: ./ops-protocol.ts). It runs the
 * commands `npm run admin` and `npm run catalog:import` hand over with this process's own services, one at a time,
 * relaying their output as it comes. A socket left by a process that died is replaced at start; stop() removes it.
 */
import { chmod, rm } from 'node:fs/promises';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { DirectoryImporter } from '../../core/catalog/public-apis/public-apis-import.js';
import { createLogger, type Logger } from '../../core/logger.js';
import type { Services } from '../services.js';
import { runAdmin } from './admin-command.js';
import { runCatalogImport } from './catalog-import-command.js';
import { println, textSink, type CommandIO } from './command-io.js';
import { OPS_COMMANDS, opsSocketOf, type OpsLine, type OpsRequest } from './ops-protocol.js';

const MAX_BODY_BYTES = 64 * 1024;

export interface OpsServer {
  path: string;
  stop(): Promise<void>;
}

class BadRequest extends Error {}

async function readRequest(req: IncomingMessage): Promise<OpsRequest> {
  if (req.method !== 'POST') throw new BadRequest('POST a command');
  let body = '';
  for await (const chunk of req) {
    body += (chunk as Buffer).toString();
    if (body.length > MAX_BODY_BYTES) throw new BadRequest('request too large');
  }
  let parsed: Partial<OpsRequest>;
  try {
    parsed = JSON.parse(body) as Partial<OpsRequest>;
  } catch {
    throw new BadRequest('the body is not JSON');
  }
  const { command, argv, operator } = parsed;
  if (!(OPS_COMMANDS as readonly unknown[]).includes(command))
    throw new BadRequest(`command must be one of ${OPS_COMMANDS.join(', ')}`);
  if (!Array.isArray(argv) || !argv.every((a) => typeof a === 'string')) throw new BadRequest('argv: strings');
  return { command: command!, argv, operator: typeof operator === 'string' ? operator : undefined };
}

async function runCommand(services: Services, request: OpsRequest, io: CommandIO): Promise<number> {
  if (request.command === 'admin') {
    const { config, orm, ledger, gatewayEvents: events } = services;
    const open = () => Promise.resolve({ deps: { config, orm, ledger, events }, close: () => Promise.resolve() });
    return runAdmin(request.argv, open, io, request.operator);
  }
  // The import's progress lines go to the caller, as they do when the script runs it itself.
  const logger = createLogger({ level: services.config.logLevel, name: 'catalog-import' }, io.stdout);
  const importer = new DirectoryImporter({ orm: services.orm, index: services.searchIndex, logger });
  try {
    await runCatalogImport(request.argv[0], { orm: services.orm, importer }, io);
    return 0;
  } catch (err) {
    println(io.stderr, err instanceof Error ? (err.stack ?? err.message) : String(err));
    return 1;
  }
}

function handler(services: Services, log: Logger) {
  let queue: Promise<unknown> = Promise.resolve();
  return async (req: IncomingMessage, res: ServerResponse) => {
    let request: OpsRequest;
    try {
      request = await readRequest(req);
    } catch (err) {
      res.writeHead(err instanceof BadRequest ? 400 : 500, { 'content-type': 'text/plain' });
      res.end(`${(err as Error).message}\n`);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    const send = (line: OpsLine) => res.write(`${JSON.stringify(line)}\n`);
    const io: CommandIO = {
      stdout: textSink((text) => send({ stdout: text })),
      stderr: textSink((text) => send({ stderr: text })),
    };
    // One command at a time: they share this process's single database connection with its own work.
    const run = queue.then(async () => {
      log.info({ command: request.command, argv: request.argv }, 'operator command');
      return runCommand(services, request, io);
    });
    queue = run.catch(() => undefined);
    const code = await run.catch((err: unknown) => {
      send({ stderr: `error: ${err instanceof Error ? err.message : String(err)}\n` });
      return 1;
    });
    send({ exit: code });
    res.end();
  };
}

/** Listens on `${dataDir}.ops.sock` for the embedded database in `dataDir`. */
export async function startOpsServer(services: Services, dataDir: string): Promise<OpsServer> {
  const path = opsSocketOf(dataDir);
  // This process holds the database's lock, so a socket already there was left by one that is gone.
  await rm(path, { force: true });
  const handle = handler(services, services.logger);
  const server = http.createServer((req, res) => void handle(req, res));
  // Created 0600 from the start (umask around the bind), not only after a chmod: no moment when others may connect.
  const previousUmask = process.umask(0o077);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => resolve());
    });
  } finally {
    process.umask(previousUmask);
  }
  await chmod(path, 0o600);
  return {
    path,
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(path, { force: true });
    },
  };
}

/**
 * startOpsServer, but a socket that cannot be opened (a DATA_DIR path longer than a Unix socket address allows, a
 * read-only folder) only costs the operator commands, not the start: they then say to stop the marketplace first.
 */
export async function startOpsServerOrWarn(services: Services, dataDir: string): Promise<OpsServer | undefined> {
  try {
    return await startOpsServer(services, dataDir);
  } catch (err) {
    services.logger.warn(
      { err: String(err), socket: opsSocketOf(dataDir) },
      'operator socket not opened: "npm run admin" and "npm run catalog:import" need this process stopped',
    );
    return undefined;
  }
}
