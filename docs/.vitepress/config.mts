// The docs site (`npm run docs:build`, `npm run docs:dev`). Its source is the repository root: README.md is the home
// page, docs/**/*.md are pages, and so is every README.md beside the code. The site is built offline (no fonts or
// scripts from elsewhere) into build/docs, and the build fails on a dead link (VitePress checks links to pages,
// links-check.ts the rest).
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig, type DefaultTheme } from "vitepress";
import { fileTree, GENERATED_DIRS, LinkChecker } from "./links-check";
import { vueSafe } from "./vue-safe";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** Folders holding no pages: built, downloaded or test output (with the directories .gitignore names), and models. */
const skippedDirs = new Set([...GENERATED_DIRS, "models", "shared", ...ignoredDirs()]);

/** The site's pages: README.md, every markdown file under docs/, and every other README.md (no other markdown). */
const markdownFiles = listMarkdown("");
const pages = markdownFiles.filter((file) => file.startsWith("docs/") || path.posix.basename(file) === "README.md");

/** Known docs pages (docs/NAME.md) by task, in this order; a page not named here goes to "More". */
const groups: { text: string; names: string[] }[] = [
  { text: "Start", names: ["index", "install"] },
  { text: "Use", names: ["api", "models", "configuration"] },
  { text: "Operate", names: ["platform", "dashboard", "agent-runs", "machine-payments", "scale-out", "releases"] },
  { text: "Measure", names: ["performance"] },
  { text: "Build", names: ["development"] },
];

const checker = new LinkChecker(root, fileTree(root, pages), (message) => console.warn(message));

export default defineConfig({
  title: "loom",
  description: "A self-hostable LLM inference service in TypeScript",
  srcDir: "..",
  srcExclude: [...[...skippedDirs].map((dir) => `**/${dir}/**`), ...markdownFiles.filter((file) => !pages.includes(file))],
  outDir: "../build/docs",
  cacheDir: "../.cache/vitepress",
  // A README is its folder's page: /server/runs/ rather than /server/runs/README.html.
  rewrites: (page) => page.replace(/(^|\/)README\.md$/, "$1index.md"),
  markdown: {
    // Heading ids as GitHub makes them, so that an anchor works on GitHub and on the site alike.
    anchor: { slugify: githubSlug },
    config(md) {
      md.use(vueSafe);
      md.use(checker.plugin);
    },
  },
  themeConfig: {
    sidebar: sidebar(),
    search: { provider: "local" },
    outline: [2, 3],
  },
  buildEnd(site) {
    checker.finish(site.outDir, (page) => (site.rewrites.map[page] ?? page).replace(/\.md$/, ".html"));
  },
});

/** The sidebar, from the pages there are: the docs pages by task, then the module READMEs under Build. */
function sidebar(): DefaultTheme.SidebarItem[] {
  const home: DefaultTheme.SidebarItem = { text: title("README.md") ?? "loom", link: "/" };
  const docs = new Map<string, DefaultTheme.SidebarItem>();
  for (const file of pages.filter((file) => /^docs\/[^/]+\.md$/.test(file))) {
    docs.set(path.posix.basename(file, ".md"), { text: title(file) ?? path.posix.basename(file, ".md"), link: link(file) });
  }
  // docs/<name>/**/*.md are <name>'s sub-pages: a README or index there first, then in the order docs/<name>.md first
  // links to them, then by name.
  const subPages = new Map<string, string[]>();
  for (const file of pages.filter((file) => /^docs\/[^/]+\/.+\.md$/.test(file))) {
    const name = file.split("/")[1];
    subPages.set(name, [...(subPages.get(name) ?? []), file]);
  }
  for (const [name, files] of subPages) {
    const item = docs.get(name) ?? { text: name };
    const parent = pages.includes(`docs/${name}.md`) ? fs.readFileSync(path.join(root, `docs/${name}.md`), "utf8") : "";
    const rank = (file: string) => {
      if (/\/(README|index)\.md$/.test(file)) return -1;
      const at = parent.indexOf(`](${file.slice("docs/".length)}`);
      return at < 0 ? Infinity : at;
    };
    files.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
    item.items = files.map((file) => ({ text: title(file) ?? path.posix.basename(file, ".md"), link: link(file) }));
    item.collapsed = true;
    docs.set(name, item);
  }
  const known = new Set(groups.flatMap((group) => group.names));
  // "index" is the home page, then docs/index.md if there is one.
  const itemsOf = (name: string) => (name === "index" ? [home] : []).concat(docs.get(name) ?? []);
  const more = [...docs.keys()].filter((name) => !known.has(name)).sort();
  const modules = pages.filter((file) => !file.startsWith("docs/") && file !== "README.md");
  const result: DefaultTheme.SidebarItem[] = groups.map(({ text, names }) => ({
    text,
    items: names.flatMap(itemsOf),
  }));
  result.at(-1)!.items!.push({
    text: "Modules",
    collapsed: true,
    items: modules.map((file) => ({ text: path.posix.dirname(file), link: link(file) })),
  });
  if (more.length > 0) result.push({ text: "More", items: more.map((name) => docs.get(name)!) });
  return result.filter((group) => group.items!.length > 0);
}

/** A page's address on the site: a README or index.md is its folder's. */
function link(file: string): string {
  return "/" + file.replace(/(^|\/)(README|index)\.md$/, "$1").replace(/\.md$/, "");
}

/** The text of a page's first level-1 heading (outside code), plain. */
function title(file: string): string | undefined {
  let fenced = false;
  for (const line of fs.readFileSync(path.join(root, file), "utf8").split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = !fenced && /^#\s+(.+?)\s*#*\s*$/.exec(line);
    if (heading) return heading[1].replace(/\[([^\]]*)\]\([^)]*\)/g, "$1").replace(/[`*]/g, "");
  }
  return undefined;
}

/** The markdown files under `dir` (relative to the root, "/"-separated), skipping dot folders and `skippedDirs`. */
function listMarkdown(dir: string): string[] {
  const files: string[] = [];
  for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = dir ? `${dir}/${entry.name}` : entry.name;
    if (entry.isDirectory()) {
      if (!entry.name.startsWith(".") && !skippedDirs.has(entry.name)) files.push(...listMarkdown(rel));
    } else if (entry.isFile() && entry.name.endsWith(".md")) {
      files.push(rel);
    }
  }
  return files.sort();
}

/** The folder names .gitignore lists (`dist/`, `/.gl/`): generated, so never pages. */
function ignoredDirs(): string[] {
  const gitignore = path.join(root, ".gitignore");
  if (!fs.existsSync(gitignore)) return [];
  return fs
    .readFileSync(gitignore, "utf8")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => /^\/?[\w.-]+\/$/.test(line))
    .map((line) => line.replace(/^\//, "").replace(/\/$/, ""));
}

/** GitHub's heading ids (github-slugger): lower case, punctuation dropped, each space a dash. */
function githubSlug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}
