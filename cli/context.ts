/**
 * What every command gets: the resolved global options (flag > environment > profile > default), the profile file,
 * a connection for the client, and the two ways of printing a success (the envelope unchanged with `--json`, a
 * human rendering otherwise).
 */
import type { Command } from 'commander';
import { request, UsageError, type ApiResponse, type Connection, type RequestSpec } from './client.js';
import { profilePath, readProfile, writeProfile, type Profile } from './config.js';

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

  /** `--key` or `SVC_API_KEY` wins everywhere; from the profile, the session wins on the control plane. */
  connection(): Connection {
    return {
      baseUrl: this.baseUrl,
      gatewayUrl: this.gatewayUrl,
      timeoutMs: this.timeoutMs,
      controlToken: this.explicitKey ?? this.profile.session_token ?? this.profile.api_key,
      gatewayKey: this.explicitKey ?? this.profile.api_key,
    };
  }

  send<T = unknown>(spec: RequestSpec): Promise<ApiResponse<T>> {
    return request<T>(this.connection(), spec);
  }

  /** Print a success: the body unchanged with `--json`, else what `human` makes of it. */
  print<T>(res: ApiResponse<T>, human: (data: T, meta: Record<string, unknown>) => string): void {
    if (this.json) out(res.text.endsWith('\n') ? res.text : `${res.text}\n`);
    else out(human(res.data, res.meta));
  }

  /** A remark for a person (where a file went, what to do next): stderr, and never with `--json`. */
  note(text: string): void {
    if (!this.json) process.stderr.write(`${text}\n`);
  }

  saveProfile(profile: Profile): void {
    this.profile = profile;
    writeProfile(this.profileFile, profile);
  }
}

export function out(text: string): void {
  process.stdout.write(text);
}

/** The Cli of a running command (its options merged with the program's global ones). */
export function cliOf(command: Command): Cli {
  return new Cli(command.optsWithGlobals<GlobalOptions>());
}
