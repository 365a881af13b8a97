// marked 4.3 ships no type declarations; the little the docs renderer uses.
declare module 'marked' {
  export class Renderer {
    link(href: string | null, title: string | null, text: string): string;
    heading(text: string, level: number, raw: string): string;
  }
  export const marked: {
    Renderer: typeof Renderer;
    parse(markdown: string, options?: { renderer?: Renderer; gfm?: boolean; headerIds?: boolean; mangle?: boolean }): string;
  };
}
