/**
 * Makes plain markdown safe to compile as a Vue template, which is what VitePress does with every page. The docs are
 * written for GitHub: they hold `{{ }}` (chat templates), placeholders such as `<model>` in running text, and
 * `<img src="dir/x.png">`, which Vue would read as an interpolation, an unclosed component and a module import.
 * {@link vueSafe} is a markdown-it plugin that, once a page is parsed:
 * - wraps the page in `<div v-pre>`, so that Vue compiles nothing in it;
 * - turns a tag that is not an HTML (or SVG) element back into text ({@link escapeUnknownTags});
 * - writes a relative `src` of raw HTML as `./src` ({@link relativeSrc}), the form Vite resolves as a file.
 */
import type { MarkdownRenderer } from "vitepress";

/** HTML and inline-SVG elements a page may use as such; any other tag is shown as text. */
const ELEMENTS = new Set(
  (
    "a abbr address area article aside audio b bdi bdo big blockquote body br button canvas caption center cite code " +
    "col colgroup data datalist dd del details dfn dialog div dl dt em embed fieldset figcaption figure font footer " +
    "form h1 h2 h3 h4 h5 h6 head header hgroup hr html i iframe img input ins kbd label legend li link main map mark " +
    "menu meta meter nav noscript object ol optgroup option output p picture pre progress q rp rt ruby s samp script " +
    "section select small source span strike strong style sub summary sup table tbody td template textarea tfoot th " +
    "thead time title tr track tt u ul var video wbr " +
    "svg g path circle ellipse rect line polyline polygon text tspan defs use symbol clippath lineargradient stop"
  ).split(" "),
);

/** `html` with every tag whose name is not in {@link ELEMENTS} escaped (`&lt;model&gt;`); comments are kept. */
export function escapeUnknownTags(html: string): string {
  return html.replace(/<\/?([A-Za-z][A-Za-z0-9-]*)\b[^<>]*>/g, (tag, name: string) =>
    ELEMENTS.has(name.toLowerCase()) ? tag : tag.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;"),
  );
}

/** `html` with each relative `src="x"` (no scheme, not /, ., # or {) written `src="./x"`. */
export function relativeSrc(html: string): string {
  return html.replace(/(\ssrc=["'])(?![a-z][a-z0-9+.-]*:|[/.#{])/gi, "$1./");
}

/** The markdown-it plugin; see the file's comment. */
export function vueSafe(md: MarkdownRenderer): void {
  md.core.ruler.push("loom_vue_safe", (state) => {
    for (const token of state.tokens) {
      if (token.type === "html_block") token.content = relativeSrc(escapeUnknownTags(token.content));
      for (const child of token.children ?? []) {
        if (child.type !== "html_inline") continue;
        const content = relativeSrc(escapeUnknownTags(child.content));
        // An escaped tag becomes text again, which markdown-it escapes when it renders it.
        if (content.startsWith("&lt;")) child.type = "text";
        else child.content = content;
      }
    }
    const open = new state.Token("html_block", "", 0);
    open.content = "<div v-pre>\n";
    const close = new state.Token("html_block", "", 0);
    close.content = "</div>\n";
    state.tokens.unshift(open);
    state.tokens.push(close);
  });
}
