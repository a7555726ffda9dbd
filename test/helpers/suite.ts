/** Suite-level set-ups shared by the test files. */
import { afterAll, beforeAll } from 'vitest';

/**
 * Starts a value before the enclosing suite's tests and stops it after them (if it started); the returned function
 * reads it in a test.
 */
export function useStarted<T>(start: () => Promise<T>, stop: (value: T) => Promise<unknown>): () => T {
  let value: T | undefined;
  beforeAll(async () => {
    value = await start();
  });
  afterAll(async () => {
    if (value !== undefined) await stop(value);
  });
  return () => {
    if (value === undefined) throw new Error('not started (used outside a test?)');
    return value;
  };
}
