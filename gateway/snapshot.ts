/** The fast state's Postgres snapshot: core/admission/snapshot.ts (the quote reads it too). */
export { loadSnapshot, type Snapshot } from '../core/admission/snapshot.js';
