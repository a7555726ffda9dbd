/**
 * fast-check settings shared by the property tests (docs/testing-properties.md). Each property has a default number
 * of runs sized for CI; `PROPERTY_RUNS=<n>` multiplies nothing but replaces it for a long local run, and
 * `PROPERTY_SEED=<seed>` (with `PROPERTY_PATH=<path>` to go straight to the shrunk case) replays a failure that
 * fast-check reported. Without PROPERTY_SEED each property runs from a fixed seed, so CI runs the same cases every
 * time and a failure reproduces; fast-check prints the seed and the path in every failure message.
 */
import type fc from 'fast-check';

/** The fixed seed of every property unless PROPERTY_SEED says otherwise. */
export const DEFAULT_PROPERTY_SEED = 20_261_125;

function envInt(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isSafeInteger(n)) throw new Error(`${name} must be an integer, got "${raw}"`);
  return n;
}

/** How many runs a property makes: PROPERTY_RUNS when set, else its CI default. */
export function propertyRuns(ciDefault: number): number {
  const runs = envInt('PROPERTY_RUNS');
  return runs !== undefined && runs > 0 ? runs : ciDefault;
}

/**
 * The parameters for `fc.assert`: runs, seed (and path) from the environment or the fixed default, and a time limit
 * on the whole property (shrinking included) so a property never outlives its test's timeout without reporting.
 */
export function propertyParameters<T>(ciDefaultRuns: number, options: { timeLimitMs?: number } = {}): fc.Parameters<T> {
  const path = process.env.PROPERTY_PATH;
  return {
    numRuns: propertyRuns(ciDefaultRuns),
    seed: envInt('PROPERTY_SEED') ?? DEFAULT_PROPERTY_SEED,
    ...(path ? { path } : {}),
    ...(options.timeLimitMs ? { interruptAfterTimeLimit: options.timeLimitMs, markInterruptAsFailure: false } : {}),
  };
}

/** A test timeout that covers PROPERTY_RUNS: the CI budget scaled by how many more runs were asked for. */
export function propertyTimeout(ciDefaultRuns: number, ciTimeoutMs: number): number {
  return Math.ceil((ciTimeoutMs * Math.max(ciDefaultRuns, propertyRuns(ciDefaultRuns))) / ciDefaultRuns);
}
