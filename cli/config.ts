/**
 * The CLI's profile file: where `svc register`, `svc signup` and `svc login` keep the URLs they used and the
 * credentials they got back. `$SVC_CONFIG`, else `$XDG_CONFIG_HOME/svc/config.json`, else `~/.config/svc/config.json`.
 * The directory is created 0700 and the file written 0600, atomically (a temporary file renamed over it), because
 * it holds a live API key or session token.
 */
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';

export interface Profile {
  base_url?: string;
  gateway_url?: string;
  org_id?: string;
  /** An API key (`svc_live_…`): works on the control plane and the gateway. */
  api_key?: string;
  /** A session token (`sess_…`): control plane only; wins over the key there, as the spec says. */
  session_token?: string;
  email?: string;
  /** The origin of the control plane that issued the credentials, and of the gateway saved with them: the only
   * servers they are sent to (credential-binding.ts). */
  credential_origin?: string;
  gateway_origin?: string;
}

const PROFILE_FIELDS = [
  'base_url',
  'gateway_url',
  'org_id',
  'api_key',
  'session_token',
  'email',
  'credential_origin',
  'gateway_origin',
] as const;

export function profilePath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SVC_CONFIG) return path.resolve(env.SVC_CONFIG);
  const configHome = env.XDG_CONFIG_HOME || path.join(env.HOME || homedir(), '.config');
  return path.join(configHome, 'svc', 'config.json');
}

/** The stored profile, or an empty one when there is no file. A file that is not a JSON object is an error. */
export function readProfile(file: string): Profile {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw err;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`${file} is not valid JSON; fix it or delete it`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new Error(`${file} must hold a JSON object`);
  }
  const profile: Profile = {};
  for (const field of PROFILE_FIELDS) {
    const value = (parsed as Record<string, unknown>)[field];
    if (typeof value === 'string' && value) profile[field] = value;
  }
  return profile;
}

export function writeProfile(file: string, profile: Profile): void {
  const dir = path.dirname(file);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.tmp`);
  try {
    writeFileSync(tmp, `${JSON.stringify(profile, null, 2)}\n`, { mode: 0o600, flag: 'w' });
    chmodSync(tmp, 0o600); // a leftover temporary file of another mode keeps its mode on overwrite
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

export function deleteProfile(file: string): void {
  rmSync(file, { force: true });
}
