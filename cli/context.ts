/**
 * What every command gets: the resolved global options (flag > environment > profile > default), the profile file,
 * a connection for the client, and the two ways of printing a success (the envelope unchanged with `--json`, a
 * human rendering otherwise).
 */
import type { Command } from 'commander';
import { ApiFailure, request, UsageError } from './client.js';
import type { ApiResponse, Connection, Operation, RequestSpec } from './client.js';
import { profilePath, readProfile, writeProfile, type Profile } from './config.js';
import { bindProfile, credentialOrigins, originOf, withheldMessage } from './credential-binding.js';
import { terminalSafe } from './terminal-text.js';

export const DEFAULT_BASE_URL = 'http://127.0.0.1:3000';
export const DEFAULT_GATEWAY_URL = 'http://127.0.0.1:3001';
export const DEFAULT_TIMEOUT_SECONDS = 30;

export interface GlobalOptions {
  baseUrl?: string;
  gatewayUrl?: string;
  key?: string;
  json?: boolean;
  timeout?: string;
}

/** `:3001` is shorthand for `http://127.0.0.1:3001`; anything else must be an http(s) URL. */
export function normalizeUrl(value: string, flag: string): string {
  const full = /^:\d{1,5}$/.test(value) ? `http://127.0.0.1${value}` : value;
  let url: URL;
  try {
    url = new URL(full);
  } catch {
    throw new UsageError(`${flag} must be an http(s) URL, got "${value}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`${flag} must be an http(s) URL, got "${value}"`);
  }
  return full.replace(/\/+$/, '');
}

export class Cli {
  readonly json: boolean;
  readonly baseUrl: string;
  readonly gatewayUrl: string;
  readonly profileFile: string;
  profile: Profile;
  private readonly explicitKey: string | undefined;
  private readonly timeoutMs: number;

  constructor(opts: GlobalOptions, env: NodeJS.ProcessEnv = process.env) {
    this.profileFile = profilePath(env);
    this.profile = readProfile(this.profileFile);
    this.json = opts.json === true;
    this.baseUrl = normalizeUrl(opts.baseUrl ?? this.profile.base_url ?? DEFAULT_BASE_URL, '--base-url');
    this.gatewayUrl = normalizeUrl(opts.gatewayUrl ?? this.profile.gateway_url ?? DEFAULT_GATEWAY_URL, '--gateway-url');
    this.explicitKey = opts.key || undefined;
    const seconds = opts.timeout === undefined ? DEFAULT_TIMEOUT_SECONDS : Number(opts.timeout);
    if (!Number.isFinite(seconds) || seconds <= 0)
      throw new UsageError('--timeout must be a positive number of seconds');
    this.timeoutMs = Math.round(seconds * 1000);
  }

  /** The origins the saved credentials belong to (credential-binding.ts). */
  private origins(): { control: string; gateway: string } {
    return credentialOrigins(this.profile, { baseUrl: DEFAULT_BASE_URL, gatewayUrl: DEFAULT_GATEWAY_URL });
  }

  /** The saved session, when it belongs to the control plane this command talks to. */
  savedSession(): string | undefined {
    return originOf(this.baseUrl) === this.origins().control ? this.profile.session_token : undefined;
  }

  /**
   * `--key` or `SVC_API_KEY` wins everywhere; from the profile, the session wins on the control plane. A saved
   * credential goes only to the origin it belongs to.
   */
  connection(preferKey = false): Connection {
    const origins = this.origins();
    const control = originOf(this.baseUrl) === origins.control;
    const gateway = originOf(this.gatewayUrl) === origins.gateway;
    const { session_token: session, api_key: key } = this.profile;
    return {
      baseUrl: this.baseUrl,
      gatewayUrl: this.gatewayUrl,
      timeoutMs: this.timeoutMs,
      controlToken: this.explicitKey ?? (control ? (preferKey ? (key ?? session) : (session ?? key)) : undefined),
      gatewayKey: this.explicitKey ?? (gateway ? key : undefined),
    };
  }

  /** One operation (cli/operations.ts), answered with its typed `data`. */
  async send<T>(op: Operation<T>, spec: RequestSpec = {}): Promise<ApiResponse<T>> {
    try {
      return await request(this.connection(spec.preferKey === true), op, spec);
    } catch (err) {
      throw this.explainWithheld(err, op, spec);
    }
  }

  /** An `unauthenticated` answer to a request the saved credential was kept from says whose credential it is. */
  private explainWithheld(err: unknown, op: Operation, spec: RequestSpec): unknown {
    if (!(err instanceof ApiFailure) || err.code !== 'unauthenticated' || this.explicitKey || spec.anonymous)
      return err;
    const gatewayPlane = op.plane === 'gateway';
    const saved = gatewayPlane ? this.profile.api_key : (this.profile.session_token ?? this.profile.api_key);
    const owner = gatewayPlane ? this.origins().gateway : this.origins().control;
    const target = originOf(gatewayPlane ? this.gatewayUrl : this.baseUrl);
    if (!saved || owner === target) return err;
    return new ApiFailure(err.code, withheldMessage(owner, target, err.message), err.text, err.details);
  }

  /** Print a success: the body unchanged with `--json`, else what `human` makes of it (escape sequences removed). */
  print<T>(res: ApiResponse<T>, human: (data: T, meta: Record<string, unknown>) => string): void {
    if (this.json) out(res.text.endsWith('\n') ? res.text : `${res.text}\n`);
    else out(terminalSafe(human(res.data, res.meta)));
  }

  /** A remark for a person (where a file went, what to do next): stderr, and never with `--json`. */
  note(text: string): void {
    if (!this.json) process.stderr.write(`${terminalSafe(text)}\n`);
  }

  /** Save the profile, its credentials bound to the URLs it is saved with (credential-binding.ts). */
  saveProfile(profile: Profile): void {
    this.profile = bindProfile(profile, this.profile, { baseUrl: DEFAULT_BASE_URL, gatewayUrl: DEFAULT_GATEWAY_URL });
    writeProfile(this.profileFile, this.profile);
  }
}

export function out(text: string): void {
  process.stdout.write(text);
}

/** The Cli of a running command (its options merged with the program's global ones). */
export function cliOf(command: Command): Cli {
  return new Cli(command.optsWithGlobals<GlobalOptions>());
}

/**
 * The action of a command that sends one operation and prints its answer. `spec` makes the request from the
 * command's arguments and options, in the order commander passes them (the command itself comes last).
 */
export function showing<T, A extends unknown[] = []>(
  op: Operation<T>,
  human: (data: T, meta: Record<string, unknown>) => string,
  spec?: (...argsAndOptions: A) => RequestSpec,
): (...args: unknown[]) => Promise<void> {
  return async (...args) => {
    const cli = cliOf(args[args.length - 1] as Command);
    cli.print(await cli.send(op, spec?.(...(args.slice(0, -1) as A))), human);
  };
}
