/**
 * Saved credentials are bound to the origin that issued them (issue 21, item 8). `svc register`, `signup` and
 * `login` store, beside the key or session, the origin of the control plane that issued it (`credential_origin`) and
 * of the gateway it was saved with (`gateway_origin`). A later `--base-url` (or `--gateway-url`) pointing elsewhere
 * does not get the saved credential: the request goes without one, and an `unauthenticated` answer says which origin
 * the credential belongs to. A profile written before this rule (no origins) is bound to the URLs it was saved with
 * (its `base_url` and `gateway_url`, else the defaults): those are the servers its credential came from.
 * `--key` / `SVC_API_KEY` are given for the command at hand and go wherever the command goes.
 */
import type { Profile } from './config.js';

export function originOf(url: string): string {
  return new URL(url).origin;
}

/** The origins the profile's credentials belong to. */
export function credentialOrigins(
  profile: Profile,
  defaults: { baseUrl: string; gatewayUrl: string },
): { control: string; gateway: string } {
  return {
    control: profile.credential_origin ?? originOf(profile.base_url ?? defaults.baseUrl),
    gateway: profile.gateway_origin ?? originOf(profile.gateway_url ?? defaults.gatewayUrl),
  };
}

/**
 * The profile to save: its credentials bound to the URLs it is saved with. A credential carried over unchanged from
 * the previous profile keeps its binding, so one that belongs to another origin is left out rather than rebound.
 */
export function bindProfile(
  next: Profile,
  previous: Profile,
  defaults: { baseUrl: string; gatewayUrl: string },
): Profile {
  const before = credentialOrigins(previous, defaults);
  const control = originOf(next.base_url ?? defaults.baseUrl);
  const gateway = originOf(next.gateway_url ?? defaults.gatewayUrl);
  const bound: Profile = { ...next, credential_origin: control, gateway_origin: gateway };
  const carried = (field: 'api_key' | 'session_token') =>
    bound[field] !== undefined && bound[field] === previous[field];
  if (carried('session_token') && before.control !== control) delete bound.session_token;
  if (carried('api_key') && (before.control !== control || before.gateway !== gateway)) delete bound.api_key;
  return bound;
}

/** Why a saved credential was not sent: the message an `unauthenticated` answer is explained with. */
export function withheldMessage(owner: string, target: string, serverMessage: string): string {
  return (
    `${serverMessage} The saved credential belongs to ${owner} and is not sent to ${target}: ` +
    `pass --key, or sign in there (svc login --base-url ${target}).`
  );
}
