/**
 * The docs site's link check: every relative link in a page's markdown must name a file or folder of the repository,
 * and every `#anchor` must name a heading of the page it points at. VitePress itself only checks links to pages;
 * this adds links to source files and folders, and anchors.
 *
 * It runs in two steps. While VitePress renders the markdown, {@link LinkChecker.plugin} (a markdown-it plugin) reads
 * each link, resolves it ({@link resolveLink}), records the dead ones, and rewrites the live ones so they work on the
 * site: a folder link goes to the folder's README page, a link to a README goes to the page VitePress makes of it
 * (`index.md`), and a link to another file keeps its address and the file is copied into the site. When the build
 * has written every page, {@link LinkChecker.finish} copies those files, checks the anchors against the heading ids
 * of the rendered HTML ({@link headingIds}), and throws the list of dead links, one `file:line → target (why)` a line.
 *
 * Links in code (fenced, indented or inline) are not links to markdown-it, so they are not checked; http(s), mailto
 * and other links with a scheme are not checked either.
 */
import fs from "node:fs";
import path from "node:path";
import type { MarkdownRenderer } from "vitepress";

/** What a path of the repository is, as far as the link check cares. */
export interface Tree {
  /** "file", "dir", or undefined when nothing is there. `relPath` is relative to the repository root, "/"-separated. */
  kind(relPath: string): "file" | "dir" | undefined;
  /** Whether the markdown file at `relPath` is a page of the site. */
  isPage(relPath: string): boolean;
}

/** Where one link leads. */
export type LinkTarget =
  | { kind: "external" }
  | { kind: "page"; page: string; anchor: string; href: string }
  | { kind: "file"; file: string; href: string }
  | { kind: "dead"; reason: string };

/** A link that leads nowhere. `file` is relative to the repository root; `line` counts from 1. */
export interface DeadLink {
  file: string;
  line: number;
  href: string;
  reason: string;
}

/** A link to a heading, checked once the pages are rendered. */
export interface AnchorLink {
  file: string;
  line: number;
  href: string;
  page: string;
  anchor: string;
}

/** Folders that are built or downloaded, not written: a link into them is dead in a clean checkout. */
export const GENERATED_DIRS = ["node_modules", "dist", "build", ".cache", "test-artifacts"];

/**
 * Resolves `href`, written in the markdown file `fromPage` (relative to the repository root), against `tree`.
 * A page link's `href` is rewritten the way VitePress serves it: `X/README.md` becomes `X/index.md`, and a folder
 * link becomes its README's page. A link with no path (`#anchor`) points at `fromPage` itself.
 */
export function resolveLink(href: string, fromPage: string, tree: Tree): LinkTarget {
  if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith("//")) return { kind: "external" };
  const [, pathPart = "", query = "", hash = ""] = /^([^?#]*)(\?[^#]*)?(#.*)?$/.exec(href) ?? [];
  let anchor: string;
  let decoded: string;
  try {
    anchor = decodeURIComponent(hash.slice(1));
    decoded = decodeURI(pathPart);
  } catch {
    return { kind: "dead", reason: "malformed URL encoding" };
  }
  if (pathPart === "") {
    return hash ? { kind: "page", page: fromPage, anchor, href } : { kind: "external" };
  }
  const target = (
    decoded.startsWith("/")
      ? path.posix.normalize(decoded.slice(1) || ".")
      : path.posix.join(path.posix.dirname(fromPage), decoded)
  ).replace(/(.)\/+$/, "$1");
  if (target === ".." || target.startsWith("../")) return { kind: "dead", reason: "outside the repository" };
  const segments = target.split("/");
  if (segments.some((segment) => GENERATED_DIRS.includes(segment))) {
    return { kind: "dead", reason: "in a generated folder, not in the repository" };
  }
  const kind = tree.kind(target);
  if (kind === undefined) return { kind: "dead", reason: "no such file or folder" };
  if (kind === "dir") {
    const readme = target === "." ? "README.md" : `${target}/README.md`;
    if (!tree.isPage(readme)) return { kind: "dead", reason: "a folder without a README.md page" };
    return { kind: "page", page: readme, anchor, href: `${pathPart.replace(/\/?$/, "/")}index.md${query}${hash}` };
  }
  if (tree.isPage(target)) {
    return { kind: "page", page: target, anchor, href: pathPart.replace(/(^|\/)README\.md$/, "$1index.md") + query + hash };
  }
  return { kind: "file", file: target, href };
}

/** The ids of the headings (h1-h6) in an HTML page, entities decoded. */
export function headingIds(html: string): Set<string> {
  const ids = new Set<string>();
  for (const match of html.matchAll(/<h[1-6]\b[^>]*?\sid="([^"]*)"/gi)) {
    ids.add(
      match[1]
        .replace(/&quot;/g, '"')
        .replace(/&#39;/g, "'")
        .replace(/&lt;/g, "<")
        .replace(/&gt;/g, ">")
        .replace(/&amp;/g, "&"),
    );
  }
  return ids;
}

/** The anchor links whose anchor is no heading id of their page; `idsOf` gives a page's ids (undefined: not built). */
export function deadAnchors(links: Iterable<AnchorLink>, idsOf: (page: string) => Set<string> | undefined): DeadLink[] {
  const dead: DeadLink[] = [];
  for (const { file, line, href, page, anchor } of links) {
    const ids = idsOf(page);
    if (ids === undefined) dead.push({ file, line, href, reason: `page ${page} was not built` });
    else if (!ids.has(anchor)) dead.push({ file, line, href, reason: `no heading #${anchor} in ${page}` });
  }
  return dead;
}

/** One line per dead link, sorted by file and line: `file:line → href (reason)`. */
export function formatDeadLinks(dead: DeadLink[]): string {
  return [...dead]
    .sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line)
    .map(({ file, line, href, reason }) => `${file}:${line} → ${href} (${reason})`)
    .join("\n");
}

/** A tree read from the file system under `root`, with `pages` (relative paths) as the site's pages. */
export function fileTree(root: string, pages: Iterable<string>): Tree {
  const pageSet = new Set(pages);
  return {
    kind(relPath) {
      try {
        const stat = fs.statSync(path.join(root, relPath));
        return stat.isDirectory() ? "dir" : stat.isFile() ? "file" : undefined;
      } catch {
        return undefined;
      }
    },
    isPage: (relPath) => pageSet.has(relPath),
  };
}

/** markdown-it's core state, as VitePress's renderer hands it to a core rule. */
type CoreState = Parameters<Parameters<MarkdownRenderer["core"]["ruler"]["push"]>[1]>[0];

/** Collects the links of every rendered page of one build, and checks them when the build is done. */
export class LinkChecker {
  private readonly dead = new Map<string, DeadLink>();
  private readonly anchors = new Map<string, AnchorLink>();
  private readonly copies = new Set<string>();

  /**
   * @param root the repository root (VitePress's srcDir)
   * @param tree the repository as the links see it
   * @param warn called with each dead link as it is found (the build fails only at {@link finish})
   */
  constructor(
    private readonly root: string,
    private readonly tree: Tree,
    private readonly warn: (message: string) => void = () => {},
  ) {}

  /** The markdown-it plugin: checks and rewrites the links of each page it renders. */
  readonly plugin = (md: MarkdownRenderer): void => {
    md.core.ruler.push("loom_links_check", (state) => this.checkPage(state));
  };

  private checkPage(state: CoreState): void {
    const source: string | undefined = state.env.realPath ?? state.env.path;
    if (!source) return;
    const fromPage = path.relative(this.root, source).split(path.sep).join("/");
    const lineOffset = frontmatterLines(source, state.src);
    let blockLine = 0; // a table cell has no line of its own: it takes its row's
    for (const block of state.tokens) {
      if (block.map) blockLine = block.map[0];
      if (block.type !== "inline" || !block.children) continue;
      let line = blockLine + 1 + lineOffset;
      for (const token of block.children) {
        if (token.type === "softbreak" || token.type === "hardbreak") line++;
        if (token.type !== "link_open") continue;
        const href = token.attrGet("href");
        if (href === null) continue;
        const target = resolveLink(href, fromPage, this.tree);
        const key = `${fromPage}:${line}:${href}`;
        if (target.kind === "dead") {
          if (!this.dead.has(key)) this.warn(`dead link ${formatDeadLinks([{ file: fromPage, line, href, reason: target.reason }])}`);
          this.dead.set(key, { file: fromPage, line, href, reason: target.reason });
        } else if (target.kind === "page") {
          token.attrSet("href", target.href);
          if (target.anchor) this.anchors.set(key, { file: fromPage, line, href, page: target.page, anchor: target.anchor });
        } else if (target.kind === "file") {
          // A target keeps VitePress's link plugin and router off the link: the browser fetches the copied file.
          token.attrSet("target", "_self");
          this.copies.add(target.file);
        }
      }
    }
  }

  /**
   * Copies the linked files into `outDir`, checks the anchors against the built pages, and throws when any link is
   * dead. `htmlOf(page)` is the built HTML file of a page (relative to `outDir`).
   */
  finish(outDir: string, htmlOf: (page: string) => string): void {
    for (const file of this.copies) {
      const dest = path.join(outDir, file);
      fs.mkdirSync(path.dirname(dest), { recursive: true });
      fs.copyFileSync(path.join(this.root, file), dest);
    }
    const ids = new Map<string, Set<string> | undefined>();
    const idsOf = (page: string) => {
      if (!ids.has(page)) {
        const html = path.join(outDir, htmlOf(page));
        ids.set(page, fs.existsSync(html) ? headingIds(fs.readFileSync(html, "utf8")) : undefined);
      }
      return ids.get(page);
    };
    const dead = [...this.dead.values(), ...deadAnchors(this.anchors.values(), idsOf)];
    if (dead.length > 0) throw new Error(`${dead.length} dead link(s) in the docs:\n${formatDeadLinks(dead)}`);
  }
}

/** How many lines of `file` precede `parsed` (its front matter, which VitePress strips before markdown-it parses). */
function frontmatterLines(file: string, parsed: string): number {
  let raw: string;
  try {
    raw = fs.readFileSync(file, "utf8");
  } catch {
    return 0;
  }
  if (!raw.startsWith("---")) return 0;
  return Math.max(0, raw.split("\n").length - parsed.split("\n").length);
}
