// The sign-in page's `next`: a path on this site, with a plain query string (the console sends people back to a
// filtered page), never another host, scheme, backslash trick or fragment.
import { describe, expect, it } from 'vitest';
import { safeNext } from '../../api/pages/forms.js';

describe('safeNext', () => {
  it.each([
    '/console',
    '/console/usage?outcome=failed',
    '/console/usage?from=2026-11-01&to=2026-11-25&key=key_1',
    '/terms/weather-terms',
  ])('keeps %s', (path) => expect(safeNext(path)).toBe(path));
  it.each([
    '//evil.example/x',
    '/\\evil.example',
    'https://evil.example/',
    'console',
    '/console#frag',
    '/console?next=https://evil.example',
    '/console?x=<script>',
    '/a\nb',
    `/${'a'.repeat(200)}`,
    42,
    undefined,
  ])('refuses %s', (value) => expect(safeNext(value)).toBeUndefined());
});
