/** Every entity, listed explicitly (no folder discovery). */
import { ApiKey } from './api-key.entity.js';
import { LedgerEntry } from './ledger-entry.entity.js';
import { Org } from './org.entity.js';
import { User } from './user.entity.js';

export { ApiKey, LedgerEntry, Org, User };
export * from './api-key.entity.js';
export * from './ledger-entry.entity.js';
export * from './org.entity.js';
export * from './user.entity.js';

export const ENTITIES = [Org, User, ApiKey, LedgerEntry];
