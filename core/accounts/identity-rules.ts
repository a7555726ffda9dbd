/**
 * What every identity flow (signup, email verification, sign-in codes) shares: the code and token lifetimes, the rate
 * limits, the client's address, the flows' dependencies, and the rate-limit check.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { CounterStore } from '../counters/index.js';
import { RateLimitedError } from '../errors.js';
import type { KeysService } from '../keys/keys.service.js';
import type { Logger } from '../logger.js';
import type { Mailer } from '../mail/mailer.js';
import type { SessionsService } from '../sessions/sessions.service.js';
import type { TemporalService } from '../temporal/temporal.service.js';

export const LOGIN_CODE_TTL_MS = 10 * 60_000;
export const LOGIN_CODE_MAX_ATTEMPTS = 5;
export const VERIFICATION_TOKEN_TTL_MS = 24 * 3_600_000;

export const RATE_LIMITS = {
  /** Code requests for one address from one client address (a stranger spends their own quota, not the owner's). */
  loginRequestPerEmailAndIp: { limit: 5, windowMs: 15 * 60_000 },
  /** Code requests for one address from everywhere: a ceiling against distributed flooding and guessing, above what
   * one client address can reach (5 per 15 minutes is at most 25 in any hour). */
  loginRequestPerEmail: { limit: 30, windowMs: 60 * 60_000 },
  loginRequestPerIp: { limit: 30, windowMs: 15 * 60_000 },
  loginVerifyPerIp: { limit: 60, windowMs: 15 * 60_000 },
  /** Wrong codes for one address from one client address; past it that client address gets 429 for that email. */
  loginWrongPerEmailAndIp: { limit: LOGIN_CODE_MAX_ATTEMPTS, windowMs: 15 * 60_000 },
  /** Email-attach requests per org (each one mails a link). */
  attachEmailPerOrg: { limit: 5, windowMs: 60 * 60_000 },
} as const;

/**
 * Every live code of an address works (a new request never voids the one in the owner's mailbox), so a sign-in
 * compares the guess with all of them: at most the per-address ceiling, since codes live 10 minutes. A wrong guess
 * counts against each, so guesses per address stay 5 per batch of codes: at worst 5 x 30 chances in 10^6 per hour.
 */
export const LOGIN_LIVE_CODES_CHECKED = RATE_LIMITS.loginRequestPerEmail.limit;

export interface ClientInfo {
  ip: string;
  userAgent?: string;
}

export interface IdentityDeps {
  orm: MikroORM;
  config: Config;
  clock: Clock;
  counters: CounterStore;
  keys: KeysService;
  sessions: SessionsService;
  temporal: TemporalService;
  mailer: Mailer;
  logger: Logger;
}

/** Count one hit of `name` in its window; past the limit, 429 with `message`. */
export async function hitLimit(
  counters: CounterStore,
  name: string,
  bucket: { limit: number; windowMs: number },
  message: string,
): Promise<void> {
  const hit = await counters.hitWindow(`rl:${name}`, bucket.limit, bucket.windowMs);
  if (!hit.allowed) throw new RateLimitedError(hit.resetMs / 1000, message);
}

/** The signup budget per client address (config.limits.signupPerHour): signups, sign-up codes and email attaches. */
export async function limitSignups(deps: Pick<IdentityDeps, 'counters' | 'config'>, client: ClientInfo): Promise<void> {
  await hitLimit(
    deps.counters,
    `signup:ip:${client.ip}`,
    { limit: deps.config.limits.signupPerHour, windowMs: 3_600_000 },
    'Too many signups from this address; try later.',
  );
}
