/**
 * The shipped Markdown docs as HTML (issue 31), with markdown-it: raw HTML in the Markdown stays escaped
 * (`html: false`), headings get ids (GitHub's rule: lower case, punctuation dropped, spaces to `-`, `-1`, `-2` on
 * repeats) so `#anchors` work, links between the docs point to `/docs/{file}` (a relative link to a file this
 * deployment does not serve keeps its text only), and `{base_url}`, `{gateway_url}`, `{mcp_url}` read as this
 * deployment's URLs.
 */
import path from 'node:path';
import markdownIt, { type Env, type MarkdownIt, type RendererRule } from 'markdown-it';
import type { Config } from '../../core/config.js';

/** `{base_url}` and its kin replaced by the configured URLs. */
export function fillPlaceholders(text: string, urls: Config['urls']): string {
  return text
    .replaceAll('{base_url}', urls.publicBase)
    .replaceAll('{gateway_url}', urls.gateway)
    .replaceAll('{mcp_url}', urls.mcp);
}

/** GitHub's heading anchor: lower case, punctuation dropped, each space a `-`. */
export function headingId(text: string): string {
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

interface RenderEnv {
  /** The doc's path from the repository root (`README.md`, `docs/spec.md`). */
  source: string;
  served: ReadonlySet<string>;
  ids: Map<string, number>;
  /** Per open link: whether it was dropped (its close is dropped too). */
  links: boolean[];
}

/** Where a link of the doc leads on this deployment: `/docs/{file}`, as written (absolute, anchor), or null (not served). */
function resolveHref(href: string, env: RenderEnv): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('#') || href.startsWith('/')) return href;
  const [file = '', fragment] = href.split('#', 2);
  const target = path.posix.normalize(path.posix.join(path.posix.dirname(env.source), decodeURIComponent(file)));
  const name = target === 'README.md' ? 'README.md' : target.startsWith('docs/') ? target.slice(5) : undefined;
  if (!name || name.includes('/') || !env.served.has(name)) return null;
  return `/docs/${encodeURIComponent(name)}${fragment ? `#${fragment}` : ''}`;
}

/** The render env of one doc (markdown-it passes it to every rule). */
const envOf = (env: Env | undefined) => env as unknown as RenderEnv;

function markdown(): MarkdownIt {
  const md = new markdownIt({ html: false, linkify: false, typographer: false });
  const headingOpen: RendererRule = (tokens, idx, options, env, self) => {
    const { ids } = envOf(env);
    const text = tokens[idx + 1]?.children?.map((t) => t.content).join('') ?? '';
    const base = headingId(text) || 'section';
    const seen = ids.get(base) ?? 0;
    ids.set(base, seen + 1);
    tokens[idx]!.attrSet('id', seen ? `${base}-${seen}` : base);
    return self.renderToken(tokens, idx, options);
  };
  const linkOpen: RendererRule = (tokens, idx, options, env, self) => {
    const token = tokens[idx]!;
    const href = resolveHref(String(token.attrGet('href') ?? ''), envOf(env));
    envOf(env).links.push(href === null);
    if (href === null) return '';
    token.attrSet('href', href);
    if (/^https?:/i.test(href)) token.attrSet('rel', 'noopener noreferrer');
    return self.renderToken(tokens, idx, options);
  };
  const linkClose: RendererRule = (tokens, idx, options, env, self) =>
    envOf(env).links.pop() ? '' : self.renderToken(tokens, idx, options);
  md.renderer.rules.heading_open = headingOpen;
  md.renderer.rules.link_open = linkOpen;
  md.renderer.rules.link_close = linkClose;
  return md;
}

const MD = markdown();

/** A shipped doc's Markdown as HTML for this deployment. */
export function renderDoc(text: string, source: string, served: ReadonlySet<string>, urls: Config['urls']): string {
  const env: RenderEnv = { source, served, ids: new Map(), links: [] };
  return MD.render(fillPlaceholders(text, urls), env as unknown as Env);
}
