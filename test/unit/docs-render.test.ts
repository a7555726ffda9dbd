// The shipped docs as HTML (issue 31, api/pages/docs-render.ts): raw HTML stays escaped, headings get GitHub's ids
// (repeats numbered), links between docs lead to /docs/{file} from the README and from docs/, a link to a file this
// deployment does not serve keeps its text only, and the URL placeholders read as the configured URLs.
import { describe, expect, it } from 'vitest';
import { fillPlaceholders, headingId, renderDoc } from '../../api/pages/docs-render.js';

const urls = { publicBase: 'https://m.example', gateway: 'https://gw.example', mcp: 'https://mcp.example' };
const served = new Set(['README.md', 'spec.md', 'cli.md']);

describe('docs as HTML', () => {
  it('escapes raw HTML in the Markdown', () => {
    const html = renderDoc('Hello <script>alert(1)</script> <b>bold</b>', 'docs/cli.md', served, urls);
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<b>');
  });

  it('gives headings GitHub-style ids, numbering repeats', () => {
    const html = renderDoc('# The CLI (`svc`)\n\n## Keys & caps\n\n## Keys & caps\n', 'docs/cli.md', served, urls);
    expect(html).toContain('<h1 id="the-cli-svc">');
    expect(html).toContain('<h2 id="keys--caps">');
    expect(html).toContain('<h2 id="keys--caps-1">');
    expect(headingId('Catalog and search')).toBe('catalog-and-search');
  });

  it('rewrites links between docs, keeps outside links and anchors, drops links to files not served', () => {
    const readme = renderDoc(
      '[spec](docs/spec.md#errors) [cli](./docs/cli.md) [site](https://example.org) [top](#top) [bench](bench/README.md) [tests](docs/testing.md)',
      'README.md',
      served,
      urls,
    );
    expect(readme).toContain('<a href="/docs/spec.md#errors">spec</a>');
    expect(readme).toContain('<a href="/docs/cli.md">cli</a>');
    expect(readme).toContain('<a href="https://example.org" rel="noopener noreferrer">site</a>');
    expect(readme).toContain('<a href="#top">top</a>');
    expect(readme).toContain(' bench ');
    expect(readme).not.toContain('bench/README.md');
    expect(readme).not.toContain('testing.md');
    const fromDocs = renderDoc(
      '[readme](../README.md) [spec](spec.md) [code](../api/app.ts)',
      'docs/cli.md',
      served,
      urls,
    );
    expect(fromDocs).toContain('<a href="/docs/README.md">readme</a>');
    expect(fromDocs).toContain('<a href="/docs/spec.md">spec</a>');
    expect(fromDocs).toMatch(/<\/a> code<\/p>/);
  });

  it('replaces {base_url}, {gateway_url} and {mcp_url}, in code too', () => {
    const html = renderDoc(
      '`{mcp_url}/mcp` at {base_url}, calls to `{gateway_url}/v1/proxy`',
      'docs/cli.md',
      served,
      urls,
    );
    expect(html).toContain('<code>https://mcp.example/mcp</code> at https://m.example');
    expect(html).toContain('<code>https://gw.example/v1/proxy</code>');
    expect(html).not.toMatch(/\{(base|gateway|mcp)_url\}/);
    expect(fillPlaceholders('Agent tools (`{mcp_url}/mcp`)', urls)).toBe('Agent tools (`https://mcp.example/mcp`)');
  });
});
