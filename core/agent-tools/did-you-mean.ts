/**
 * "Did you mean `query`?" for an argument a tool does not take (issue 31 item 3): the closest of the tool's argument
 * names, or none when nothing is close. Names are compared case-insensitively and without `_`, `-` and spaces (so
 * `maxResults` finds `max_results`); a name that starts with the unknown one (`q` → `query`), or that it starts
 * with, is closest after an exact match; otherwise the smallest edit distance (Levenshtein, a swap of two
 * neighbours counting one) within a third of the longer name, at least 1.
 */
import { ValidationError } from '../errors.js';

/**
 * The edit distance between two names: insertions, deletions, substitutions and swaps of two neighbours (`qyt` for
 * `qty`) of one character each (Levenshtein with transpositions, the "optimal string alignment" distance).
 */
export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  const rows: number[][] = [Array.from({ length: b.length + 1 }, (_, j) => j)];
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1]![j]! + 1, row[j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      row.push(d);
    }
    rows.push(row);
  }
  return rows[a.length]![b.length]!;
}

const fold = (name: string) => name.toLowerCase().replace(/[\s_-]+/g, '');

/** How far `name` is from `word` (lower is closer); undefined when it is not close. */
function closeness(word: string, name: string): number | undefined {
  const w = fold(word);
  const n = fold(name);
  if (!w || !n) return undefined;
  if (w === n) return 0;
  if (n.startsWith(w) || w.startsWith(n)) return 0.5;
  const distance = editDistance(w, n);
  return distance <= Math.max(1, Math.floor(Math.max(w.length, n.length) / 3)) ? distance : undefined;
}

/** The name of `names` closest to `word`, or undefined when none is close (the first of equals wins). */
export function closestName(word: string, names: readonly string[]): string | undefined {
  let best: { name: string; score: number } | undefined;
  for (const name of names) {
    const score = closeness(word, name);
    if (score !== undefined && (!best || score < best.score)) best = { name, score };
  }
  return best?.name;
}

/**
 * The refusal of arguments a tool does not take: 400 `validation_failed` whose message names each one with the
 * closest expected name, and `details`: `unknown`, `suggestions` (unknown name → expected name), `expected` (every
 * argument the tool takes) and `issues` in the shape of the other validation errors.
 */
export function unknownArgumentsError(unknown: readonly string[], expected: readonly string[]): ValidationError {
  const suggestions: Record<string, string> = {};
  const issues = unknown.map((name) => {
    const closest = closestName(name, expected);
    if (closest) suggestions[name] = closest;
    return { path: name, message: closest ? `unknown argument; did you mean \`${closest}\`?` : 'unknown argument' };
  });
  const said = unknown.map((name) =>
    suggestions[name] ? `\`${name}\`: did you mean \`${suggestions[name]}\`?` : `\`${name}\``,
  );
  const takes =
    expected.length > 0
      ? `This tool takes ${expected.map((n) => `\`${n}\``).join(', ')}.`
      : 'This tool takes no arguments.';
  const head = `Unknown argument${unknown.length === 1 ? '' : 's'} ${said.join('; ')}`;
  return new ValidationError(`${head}${head.endsWith('?') ? '' : '.'} ${takes}`, {
    details: { unknown: [...unknown], suggestions, expected: [...expected], issues },
  });
}

/** The refusal for the keys of `args` that are not in `expected`; undefined when every key is expected. */
export function checkKnownArguments(args: object, expected: readonly string[]): ValidationError | undefined {
  const known = new Set(expected);
  const unknown = Object.keys(args).filter((k) => !known.has(k));
  return unknown.length > 0 ? unknownArgumentsError(unknown, expected) : undefined;
}
