/**
 * The `svc` command tree (commander) and the exit-code contract: 0 success, 1 an API failure (the failure
 * envelope on stdout with `--json`, a one-line `code: message` on stderr otherwise), 2 a usage error (unknown
 * command or option, missing or malformed argument) reported in one line on stderr before anything is sent.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Command, CommanderError, Option } from 'commander';
import { ApiFailure, UsageError } from './client.js';
import { accountCommands } from './commands/account.js';
import { billingCommands } from './commands/billing.js';
import { callCommand } from './commands/call.js';
import { catalogCommands } from './commands/catalog.js';
import { keysCommands } from './commands/keys.js';
import { providerCommands } from './commands/provider.js';
import { DEFAULT_BASE_URL, DEFAULT_GATEWAY_URL, DEFAULT_TIMEOUT_SECONDS } from './context.js';
import { terminalSafe } from './terminal-text.js';

export const EXIT_OK = 0;
export const EXIT_API_FAILURE = 1;
export const EXIT_USAGE = 2;

function packageVersion(): string {
  const file = path.join(import.meta.dirname, '..', 'package.json');
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}

export function buildProgram(): Command {
  const program = new Command('svc');
  // Set before any subcommand is added: subcommands copy these settings from their parent when created.
  program.exitOverride();
  program.configureOutput({
    writeOut: (s) => process.stdout.write(s),
    writeErr: (s) => process.stderr.write(s),
  });
  program
    .description('Command-line client of the API marketplace: search, call, keys, billing and providing APIs.')
    .version(packageVersion(), '-V, --version', 'print the version')
    .addOption(
      new Option('--base-url <url>', `control plane URL (default ${DEFAULT_BASE_URL}, or the profile's)`).env(
        'SVC_BASE_URL',
      ),
    )
    .addOption(
      new Option('--gateway-url <url>', `gateway URL; ":3001" means ${DEFAULT_GATEWAY_URL} (the default)`).env(
        'SVC_GATEWAY_URL',
      ),
    )
    .addOption(new Option('--key <key>', 'API key to use instead of the profile’s credentials').env('SVC_API_KEY'))
    .option('--json', 'print the response envelope unchanged')
    .option('--timeout <seconds>', `give up on a request after this long (default ${DEFAULT_TIMEOUT_SECONDS})`);

  accountCommands(program);
  catalogCommands(program);
  callCommand(program);
  keysCommands(program);
  billingCommands(program);
  providerCommands(program);
  return program;
}

/** Run one command line (`argv` without node and the script) and return the exit code. */
export async function run(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv, { from: 'user' });
    return EXIT_OK;
  } catch (err) {
    return report(err, program.opts<{ json?: boolean }>().json === true);
  }
}

function report(err: unknown, json: boolean): number {
  if (err instanceof CommanderError) {
    // Commander has already printed its one-line message (or the help / version text).
    return err.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
  }
  if (err instanceof UsageError) {
    process.stderr.write(`error: ${terminalSafe(oneLine(err.message))}\n`);
    return EXIT_USAGE;
  }
  if (err instanceof ApiFailure) {
    if (json) process.stdout.write(err.text.endsWith('\n') ? err.text : `${err.text}\n`);
    else process.stderr.write(terminalSafe(`${err.code}: ${oneLine(err.message)}${nextStep(err.details)}`) + '\n');
    return EXIT_API_FAILURE;
  }
  process.stderr.write(`error: ${terminalSafe(oneLine((err as Error).message ?? String(err)))}\n`);
  return EXIT_API_FAILURE;
}

/** Where a person acts next (approve spend, accept terms), kept on the same line. */
function nextStep(details: Record<string, unknown> | undefined): string {
  const url = details?.approval_url;
  return typeof url === 'string' ? ` (${url})` : '';
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}
