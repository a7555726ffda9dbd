/**
 * Control-plane sessions for people. The token is `sess_` + 32 base62 characters (~190 bits), stored only as its
 * SHA-256. A session ends 30 days after sign-in (absolute), after 7 days without use (idle), or at logout.
 * A verified person's session carries the full marketplace scopes (spec: Session token); before the email is
 * verified it carries the consumer scopes, like the signup key (so billing and provider steps wait for verification).
 * Routes that need more (an owner or admin role) check the principal's user fields.
 */
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { Org, Session, User, type UserRole } from '../../db/entities/index.js';
import { ALL_SCOPES, CONSUMER_SCOPES, type Principal } from '../auth/scopes.js';
import type { Clock } from '../clock.js';
import { randomString, sha256Hex } from '../crypto.js';
import { UnauthenticatedError } from '../errors.js';
import { newId } from '../ids.js';

export const SESSION_ABSOLUTE_MS = 30 * 24 * 3_600_000;
export const SESSION_IDLE_MS = 7 * 24 * 3_600_000;
/** lastSeenAt is written at most this often, so authenticated reads do not each cost a write. */
const TOUCH_INTERVAL_MS = 60_000;

export type SessionPrincipal = Extract<Principal, { type: 'session' }>;

export interface NewSession {
  token: string;
  sessionId: string;
  expiresAt: Date;
}

export class SessionsService {
  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
  ) {}

  /** Create a session inside the caller's unit of work; the plaintext token is returned once. */
  create(em: EntityManager, input: { userId: string; orgId: string; ip?: string; userAgent?: string }): NewSession {
    const token = `sess_${randomString(32)}`;
    const now = this.clock.now();
    const session = em.create(Session, {
      id: newId('session'),
      tokenHash: sha256Hex(token),
      user: em.getReference(User, input.userId),
      org: em.getReference(Org, input.orgId),
      createdAt: now,
      lastSeenAt: now,
      expiresAt: new Date(now.getTime() + SESSION_ABSOLUTE_MS),
      ip: input.ip?.slice(0, 64) ?? null,
      userAgent: input.userAgent?.slice(0, 300) ?? null,
    });
    return { token, sessionId: session.id, expiresAt: session.expiresAt };
  }

  /** Resolve a session token to its principal, or throw 401. */
  async authenticate(token: string): Promise<SessionPrincipal> {
    const em = this.orm.em.fork();
    const session = await em.findOne(Session, { tokenHash: sha256Hex(token) }, { populate: ['user'] });
    const now = this.clock.now();
    if (
      !session ||
      session.revokedAt ||
      session.expiresAt <= now ||
      session.lastSeenAt.getTime() + SESSION_IDLE_MS <= now.getTime()
    ) {
      throw new UnauthenticatedError('Unknown or expired session token; sign in again.');
    }
    if (now.getTime() - session.lastSeenAt.getTime() > TOUCH_INTERVAL_MS) {
      session.lastSeenAt = now;
      await em.flush();
    }
    const user = session.user;
    return {
      type: 'session',
      orgId: session.org.id,
      sessionId: session.id,
      userId: user.id,
      role: user.role as UserRole,
      emailVerified: user.emailVerifiedAt != null,
      scopes: user.emailVerifiedAt != null ? ALL_SCOPES : CONSUMER_SCOPES,
      email: user.email,
    };
  }

  /** End a session (logout). Idempotent. */
  async revoke(sessionId: string): Promise<void> {
    await this.orm.em.fork().nativeUpdate(Session, { id: sessionId, revokedAt: null }, { revokedAt: this.clock.now() });
  }
}
