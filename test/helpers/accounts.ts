/** People for tests, created straight through the services (the signup flow has its own tests). */
import { SCOPES, type Scope } from '../../core/auth/scopes.js';
import { newId } from '../../core/ids.js';
import type { Services } from '../../platform/services.js';
import { Org, User } from '../../db/entities/index.js';

export interface Person {
  orgId: string;
  userId: string;
  email: string;
  /** A key with `scopes` (all scopes by default). */
  apiKey: string;
  keyId: string;
  session: string;
}

let counter = 0;

export async function createPerson(
  services: Pick<Services, 'orm' | 'keys' | 'sessions'>,
  options: { verified?: boolean; role?: 'owner' | 'admin' | 'member'; scopes?: readonly Scope[]; orgId?: string } = {},
): Promise<Person> {
  const em = services.orm.em.fork();
  const org = options.orgId
    ? em.getReference(Org, options.orgId)
    : em.create(Org, { id: newId('org'), kind: 'standard' });
  const email = `person-${Date.now()}-${++counter}@example.com`;
  const user = em.create(User, {
    id: newId('user'),
    org,
    email,
    role: options.role ?? 'owner',
    emailVerifiedAt: options.verified === false ? null : new Date(),
  });
  const { key, plaintext } = services.keys.create(em, {
    orgId: org.id,
    name: 'test',
    scopes: options.scopes ?? SCOPES,
    source: 'signup',
  });
  const session = services.sessions.create(em, { userId: user.id, orgId: org.id });
  await em.flush();
  return { orgId: org.id, userId: user.id, email, apiKey: plaintext, keyId: key.id, session: session.token };
}
