/**
 * Bot challenge for human signup (Turnstile-compatible siteverify): POST `secret`, `response` and `remoteip` as a
 * form to CHALLENGE_VERIFY_URL and require `{ "success": true }`. Required when NODE_ENV=production.
 */
import { z } from 'zod';
import { ForbiddenError, ServiceUnavailableError, ValidationError } from '../errors.js';

const VerifyResponse = z.object({ success: z.boolean(), 'error-codes': z.array(z.string()).optional() });

export interface ChallengeSettings {
  required: boolean;
  verifyUrl?: string;
  secret?: string;
  timeoutMs?: number;
}

export async function verifyChallenge(
  settings: ChallengeSettings,
  token: string | undefined,
  ip: string,
): Promise<void> {
  if (!settings.required) return;
  if (!token) throw new ValidationError('challenge_token is required.', { details: { field: 'challenge_token' } });
  if (!settings.verifyUrl || !settings.secret)
    throw new ServiceUnavailableError('The bot challenge is not configured.');
  let body: unknown;
  try {
    const res = await fetch(settings.verifyUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ secret: settings.secret, response: token, remoteip: ip }),
      signal: AbortSignal.timeout(settings.timeoutMs ?? 5_000),
    });
    body = await res.json();
  } catch (err) {
    throw new ServiceUnavailableError('The bot challenge could not be verified; try again.', { cause: err });
  }
  const parsed = VerifyResponse.safeParse(body);
  if (!parsed.success) throw new ServiceUnavailableError('The bot challenge verifier answered unexpectedly.');
  if (!parsed.data.success) {
    throw new ForbiddenError('The bot challenge failed; reload the page and try again.', {
      details: { challenge_errors: parsed.data['error-codes'] ?? [] },
    });
  }
}
