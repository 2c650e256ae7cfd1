import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMarkdownRenderer, disposeMdItInstance } from "vitepress";
import { deadAnchors, fileTree, formatDeadLinks, headingIds, LinkChecker, resolveLink, type Tree } from "./links-check";

/** A repository of a few paths: pages end in .md, folders in /. */
function tree(paths: string[]): Tree {
  const dirs = new Set(paths.filter((p) => p.endsWith("/")).map((p) => p.slice(0, -1)));
  dirs.add(".");
  return {
    kind: (p) => (dirs.has(p) ? "dir" : paths.includes(p) ? "file" : undefined),
    isPage: (p) => p.endsWith(".md") && paths.includes(p),
  };
}

describe("resolveLink", () => {
  const repo = tree([
    "README.md",
    "docs/",
    "docs/api.md",
    "docs/install.md",
    "server/",
    "server/models.ts",
    "server/runs/",
    "server/runs/README.md",
    "server/platform/",
    "server/platform/db/",
    "server/platform/db/migrations/",
    "dist/",
    "dist/server/main.js",
  ]);

  it("resolves page links, rewriting a README to the index VitePress serves", () => {
    expect(resolveLink("install.md", "docs/api.md", repo)).toEqual({ kind: "page", page: "docs/install.md", anchor: "", href: "install.md" });
    expect(resolveLink("../README.md#a-first-request", "docs/api.md", repo)).toEqual({
      kind: "page",
      page: "README.md",
      anchor: "a-first-request",
      href: "../index.md#a-first-request",
    });
    expect(resolveLink("/docs/api.md", "server/runs/README.md", repo)).toMatchObject({ kind: "page", page: "docs/api.md" });
    expect(resolveLink("#tests", "docs/api.md", repo)).toEqual({ kind: "page", page: "docs/api.md", anchor: "tests", href: "#tests" });
  });

  it("sends a folder link to the folder's README page", () => {
    expect(resolveLink("../server/runs/", "docs/api.md", repo)).toEqual({
      kind: "page",
      page: "server/runs/README.md",
      anchor: "",
      href: "../server/runs/index.md",
    });
    expect(resolveLink("runs#queue", "server/models.md", repo)).toMatchObject({ page: "server/runs/README.md", href: "runs/index.md#queue" });
    expect(resolveLink("../", "docs/api.md", repo)).toMatchObject({ kind: "page", page: "README.md", href: "../index.md" });
  });

  it("keeps a link to a source file, to be copied into the site", () => {
    expect(resolveLink("../server/models.ts", "docs/api.md", repo)).toEqual({ kind: "file", file: "server/models.ts", href: "../server/models.ts" });
  });

  it("reports each kind of dead link", () => {
    const dead = (href: string) => resolveLink(href, "docs/api.md", repo);
    expect(dead("../server/model.ts")).toEqual({ kind: "dead", reason: "no such file or folder" });
    expect(dead("configuration.md")).toEqual({ kind: "dead", reason: "no such file or folder" });
    expect(dead("../server/platform/db/migrations/")).toEqual({ kind: "dead", reason: "a folder without a README.md page" });
    expect(dead("../../shared/models/x.gguf")).toEqual({ kind: "dead", reason: "outside the repository" });
    expect(dead("../dist/server/main.js")).toEqual({ kind: "dead", reason: "in a generated folder, not in the repository" });
    expect(dead("%E0%A4%A.md")).toEqual({ kind: "dead", reason: "malformed URL encoding" });
  });

  it("leaves links with a scheme alone", () => {
    for (const href of ["https://example.org/x.md", "http://127.0.0.1:8080/v1/models", "mailto:a@example.org", "//cdn.example.org/x"]) {
      expect(resolveLink(href, "docs/api.md", repo)).toEqual({ kind: "external" });
    }
  });
});

describe("anchors", () => {
  const html = `<h1 id="loom" tabindex="-1">loom</h1><p id="not-a-heading"></p>
    <h2 id="a-first-request" tabindex="-1">A first request</h2><h3 class="x" id="q&amp;a">Q&amp;A</h3>`;

  it("reads the heading ids of rendered HTML", () => {
    expect([...headingIds(html)]).toEqual(["loom", "a-first-request", "q&a"]);
  });

  it("reports an anchor that names no heading, or a page that was not built", () => {
    const ids = headingIds(html);
    const links = [
      { file: "docs/api.md", line: 3, href: "../README.md#a-first-request", page: "README.md", anchor: "a-first-request" },
      { file: "docs/api.md", line: 4, href: "../README.md#not-a-heading", page: "README.md", anchor: "not-a-heading" },
      { file: "docs/api.md", line: 5, href: "gone.md#x", page: "docs/gone.md", anchor: "x" },
    ];
    const dead = deadAnchors(links, (page) => (page === "README.md" ? ids : undefined));
    expect(formatDeadLinks(dead)).toBe(
      "docs/api.md:4 → ../README.md#not-a-heading (no heading #not-a-heading in README.md)\n" +
        "docs/api.md:5 → gone.md#x (page docs/gone.md was not built)",
    );
  });
});

describe("LinkChecker on VitePress's markdown renderer", () => {
  let root: string;
  beforeAll(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), "loom-links-check-"));
    for (const [file, text] of Object.entries({
      "README.md": "# loom\n",
      "docs/install.md": "# Install\n\n## First run\n",
      "server/models.ts": "export {};\n",
      "server/runs/README.md": "# Runs\n",
      "server/platform/db/migrations/001.ts": "export {};\n",
    })) {
      fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
      fs.writeFileSync(path.join(root, file), text);
    }
  });
  afterAll(() => {
    disposeMdItInstance();
    fs.rmSync(root, { recursive: true, force: true });
  });

  const page = [
    "# API", //                                                  1
    "", //                                                       2
    "See [install](install.md#first-run), [the home](../README.md) and", //  3
    "[runs](../server/runs/) in [models.ts](../server/models.ts).", //        4
    "", //                                                       5
    "| a | b |", //                                              6
    "|---|---|", //                                              7
    "| [gone](../server/gone.ts) | [migrations](../server/platform/db/migrations/) |", // 8
    "", //                                                       9
    "Broken anchors: [here](#nowhere) and [there](install.md#last-run); [ok](#api).", // 10
    "", //                                                       11
    "```md", //                                                  12
    "[in a code block](missing.md)", //                          13
    "```", //                                                    14
    "", //                                                       15
    "Inline `[code](missing.md)`, and [the web](https://example.org/missing.md).", // 16
  ].join("\n");

  async function render(checker: LinkChecker): Promise<string> {
    disposeMdItInstance();
    const md = await createMarkdownRenderer(root, { highlight: (code) => code, config: (md) => md.use(checker.plugin) });
    const file = path.join(root, "docs/api.md");
    return md.render(page, { path: file, realPath: file, relativePath: "docs/api.md" });
  }

  it("rewrites live links, reports dead ones with their lines, copies linked files", async () => {
    const pages = ["README.md", "docs/api.md", "docs/install.md", "server/runs/README.md"];
    const warnings: string[] = [];
    const checker = new LinkChecker(root, fileTree(root, pages), (message) => warnings.push(message));
    const html = await render(checker);
    expect(html).toContain('href="./install.html#first-run"');
    expect(html).toContain('href="./../"'); // README.md is the home page, index.md
    expect(html).toContain('href="./../server/runs/"');
    expect(html).toContain('href="../server/models.ts" target="_self"');
    expect(warnings).toEqual([
      "dead link docs/api.md:8 → ../server/gone.ts (no such file or folder)",
      "dead link docs/api.md:8 → ../server/platform/db/migrations/ (a folder without a README.md page)",
    ]);

    // The built pages, as VitePress writes them (README.md rewritten to index.md).
    const outDir = path.join(root, "build/docs");
    fs.mkdirSync(path.join(outDir, "docs"), { recursive: true });
    fs.writeFileSync(path.join(outDir, "docs/api.html"), '<h1 id="api">API</h1>');
    fs.writeFileSync(path.join(outDir, "docs/install.html"), '<h1 id="install">Install</h1><h2 id="first-run">First run</h2>');
    const htmlOf = (file: string) => file.replace(/(^|\/)README\.md$/, "$1index.md").replace(/\.md$/, ".html");
    expect(() => checker.finish(outDir, htmlOf)).toThrow(
      "4 dead link(s) in the docs:\n" +
        "docs/api.md:8 → ../server/gone.ts (no such file or folder)\n" +
        "docs/api.md:8 → ../server/platform/db/migrations/ (a folder without a README.md page)\n" +
        "docs/api.md:10 → #nowhere (no heading #nowhere in docs/api.md)\n" +
        "docs/api.md:10 → install.md#last-run (no heading #last-run in docs/install.md)",
    );
    expect(fs.readFileSync(path.join(outDir, "server/models.ts"), "utf8")).toBe("export {};\n");
  });

  it("passes a page whose links all lead somewhere", async () => {
    const checker = new LinkChecker(root, fileTree(root, ["README.md", "docs/api.md", "docs/install.md", "server/runs/README.md"]));
    disposeMdItInstance();
    const md = await createMarkdownRenderer(root, { highlight: (code) => code, config: (md) => md.use(checker.plugin) });
    const file = path.join(root, "docs/api.md");
    md.render("# API\n\n[install](install.md#first-run), [runs](../server/runs/), [code](../server/models.ts), [top](#api)\n", {
      path: file,
      realPath: file,
    });
    const outDir = path.join(root, "build/ok");
    fs.mkdirSync(path.join(outDir, "docs"), { recursive: true });
    fs.writeFileSync(path.join(outDir, "docs/api.html"), '<h1 id="api">API</h1>');
    fs.writeFileSync(path.join(outDir, "docs/install.html"), '<h2 id="first-run">First run</h2>');
    expect(() => checker.finish(outDir, (p) => p.replace(/\.md$/, ".html"))).not.toThrow();
    expect(fs.existsSync(path.join(outDir, "server/models.ts"))).toBe(true);
  });
});
