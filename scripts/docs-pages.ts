/**
 * The guides Lumen serves under /docs (src/http/docs.ts): every Markdown page of docs/
 * and the contracts' changelog, rendered to HTML once here, at `npm run generate`, so
 * the executable carries them with nothing to render or fetch at run time. Links
 * between guides become links between served pages; a link to a file of the repository
 * that is not served (a source file, a test) becomes plain code text, so no served page
 * points at something a partner cannot reach.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { marked } from 'marked';

export interface GuidePage {
  /** URL segment: /docs/guides/<slug> (the changelog is /docs/changelog). */
  readonly slug: string;
  readonly title: string;
  /** The repository file it is rendered from. */
  readonly source: string;
  readonly html: string;
}

/** The served URL of a repository Markdown file, or null when it is not served. */
function servedUrl(target: string, slugs: ReadonlySet<string>): string | null {
  const [file, anchor] = target.split('#', 2) as [string, string | undefined];
  const base = path.basename(file);
  const hash = anchor ? `#${anchor}` : '';
  if (base === 'CHANGELOG.md') return `/docs/changelog${hash}`;
  if (base === 'README.md') return '/docs';
  const slug = base.replace(/\.md$/, '');
  if (base.endsWith('.md') && slugs.has(slug)) return `/docs/guides/${slug}${hash}`;
  return null;
}

function escapeHtml(s: string): string {
  return s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
}

function render(markdown: string, slugs: ReadonlySet<string>): string {
  const renderer = new marked.Renderer();
  const link = renderer.link.bind(renderer);
  renderer.link = (href, title, text) => {
    if (!href) return text;
    if (/^(https?:|mailto:)/.test(href) || href.startsWith('#') || href.startsWith('/')) return link(href, title, text);
    const served = servedUrl(href, slugs);
    return served ? link(served, title, text) : `<code>${escapeHtml(href.replace(/^(\.\.\/)+/, ''))}</code>${text === href ? '' : ` (${text})`}`;
  };
  // Headings get ids so a page can link to its own sections.
  renderer.heading = (text, level, raw) => `<h${level} id="${raw.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '-').replace(/^-|-$/g, '')}">${text}</h${level}>\n`;
  return marked.parse(markdown, { renderer, gfm: true, headerIds: false, mangle: false });
}

/** Every served guide, in a stable order (by slug, the changelog last). */
export function guidePages(root: string): GuidePage[] {
  const files = readdirSync(path.join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort();
  const slugs = new Set(files.map((f) => f.replace(/\.md$/, '')));
  const pages: GuidePage[] = [];
  const page = (slug: string, source: string): GuidePage => {
    const markdown = readFileSync(path.join(root, source), 'utf8');
    const title = /^#\s+(.+)$/m.exec(markdown)?.[1]?.trim() ?? slug;
    return { slug, title, source, html: render(markdown, slugs) };
  };
  for (const f of files) pages.push(page(f.replace(/\.md$/, ''), `docs/${f}`));
  pages.push(page('changelog', 'openapi/CHANGELOG.md'));
  return pages;
}
