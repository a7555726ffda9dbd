/** The frame of our few server-rendered pages: plain HTML and CSS, no scripts, a strict CSP. */
import { escapeHtml } from '../../core/html.js';

export const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/**
 * The page CSP, allowing exactly the inline scripts whose SHA-256 (base64) is given: a page's JSON-LD blocks
 * (`<script type="application/ld+json">`, never executed, but a script element all the same). No hash: PAGE_CSP.
 */
export function pageCsp(scriptHashes: readonly string[] = []): string {
  if (!scriptHashes.length) return PAGE_CSP;
  return `${PAGE_CSP}; script-src ${scriptHashes.map((h) => `'sha256-${h}'`).join(' ')}`;
}

export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · API marketplace</title>
<style>
  body { font: 16px/1.5 system-ui, sans-serif; max-width: 28rem; margin: 4rem auto; padding: 0 1rem; color: #1b1b1f; }
  h1 { font-size: 1.4rem; }
  label { display: block; margin: 1rem 0 .25rem; font-weight: 600; }
  input:not([type]), input[type=email], input[type=text] { width: 100%; padding: .6rem; font-size: 1rem; box-sizing: border-box; }
  button { margin-top: 1rem; padding: .6rem 1.2rem; font-size: 1rem; cursor: pointer; }
  .error { color: #a4161a; } .ok { color: #1b6b2c; } .muted { color: #666; font-size: .9rem; }
</style>
</head>
<body>
<main>
<h1>${escapeHtml(title)}</h1>
${body}
</main>
</body>
</html>`;
}

export { escapeHtml };
