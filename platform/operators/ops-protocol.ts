/**
 * The running marketplace's operator socket: when `npm start` owns the embedded database (PGlite takes one
 * connection, and one process owns its files), `npm run admin` and `npm run catalog:import` hand their command to it
 * over a Unix domain socket beside the data (`${dataDir}.ops.sock`, mode 0600: only the user running the
 * marketplace can use it). One route: POST / with `{ command, argv, operator }`; the answer streams NDJSON lines
 * `{ "stdout": text }`, `{ "stderr": text }` and a last `{ "exit": code }`.
 */
export const OPS_COMMANDS = ['admin', 'catalog-import'] as const;
export type OpsCommand = (typeof OPS_COMMANDS)[number];

export interface OpsRequest {
  command: OpsCommand;
  argv: string[];
  /** Who typed the command (their USER), for the audit line when --operator is absent. */
  operator?: string;
}

export type OpsLine = { stdout: string } | { stderr: string } | { exit: number };

/** The operator socket of the embedded database in `dataDir` (the pglite folder). */
export const opsSocketOf = (dataDir: string): string => `${dataDir}.ops.sock`;
