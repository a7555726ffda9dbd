// The tsquery the search builds from lexemes is passed as a parameter (parsed once, not per row); its quoting must
// hold for any lexeme the english configuration can produce.
import { describe, expect, it } from 'vitest';
import { tsOr } from '../../core/catalog/search/search.service.js';

describe('tsOr', () => {
  it('ORs quoted lexemes and is null for none', () => {
    expect(tsOr(['weather', 'forecast'])).toBe("'weather' | 'forecast'");
    expect(tsOr([])).toBeNull();
  });
  it("doubles quotes and backslashes inside a lexeme (tsquery's quoting)", () => {
    expect(tsOr(["o'neil", 'a\\b'])).toBe("'o''neil' | 'a\\\\b'");
  });
});
