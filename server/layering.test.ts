// The arrows between the project's parts, read from every TypeScript, TSX and JavaScript source (tests included):
// the kernels know nothing of the engine, the server or anything else outside kernels/, the engine nothing of the server, the platform nothing of the surfaces
// built on it (the dashboard, agent runs, machine endpoints), and the dashboard is mounted only by the server's
// assembly. A broken arrow fails with each offending file, line and specifier.
import { readFileSync, readdirSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { importSpecifiers, resolveSpecifier } from "./testing/import-specifiers.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** The files that assemble a server from its surfaces, and so may import the dashboard (`loom gateway` goes through `loom serve`'s). */
const ASSEMBLY_FILES = ["server/cli/serve-command.ts"];

/** Folders never read, wherever they are: dependencies and build output; hidden folders (.git, .cache) too. */
const SKIPPED_FOLDERS = new Set(["node_modules", "dist"]);
/** Top-level folders never read: the docs site's build, test output, models. */
const SKIPPED_TOP_FOLDERS = new Set(["build", "test-artifacts", "models"]);

/** One import of one source: its file and target relative to the root, with `/` separators. */
interface Arrow {
  from: string;
  line: number;
  specifier: string;
  /** The resolved target (relative imports), or undefined for a package or built-in. */
  to: string | undefined;
}

/** Every .ts, .tsx (AssemblyScript's .as.ts included), .js and .mjs source under the root (declaration files aside), relative to it. */
function sources(folder = ROOT): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    if (entry.name.startsWith(".") || SKIPPED_FOLDERS.has(entry.name) || (folder === ROOT && SKIPPED_TOP_FOLDERS.has(entry.name))) continue;
    const path = join(folder, entry.name);
    if (entry.isDirectory()) found.push(...sources(path));
    else if (entry.isFile() && /\.(tsx?|m?js)$/.test(entry.name) && !entry.name.endsWith(".d.ts")) found.push(relative(ROOT, path).split(sep).join("/"));
  }
  return found;
}

const ARROWS: Arrow[] = sources().flatMap((file) => {
  const absolute = join(ROOT, file);
  return importSpecifiers(readFileSync(absolute, "utf8")).map(({ specifier, line }) => {
    const target = resolveSpecifier(absolute, specifier);
    return { from: file, line, specifier, to: target === undefined ? undefined : relative(ROOT, target).split(sep).join("/") };
  });
});

/** Whether a root-relative path lies in `folder` (a path ending in `/`) or is that folder. */
function within(path: string, folder: string): boolean {
  return path.startsWith(folder) || `${path}/` === folder;
}

/** The arrows from files in `from` to files in any of `to`, as `file:line imports "specifier"` lines. */
function offending(from: string, to: readonly string[], exempt: (file: string) => boolean = () => false): string[] {
  return offendingWhere(from, (target) => to.some((folder) => within(target, folder)), exempt);
}

/** The arrows from files in `from` (not `exempt`) to a file for which `forbidden` holds, as offending() lists them. */
function offendingWhere(from: string, forbidden: (target: string) => boolean, exempt: (file: string) => boolean = () => false): string[] {
  return ARROWS
    .filter((arrow) => within(arrow.from, from) && !exempt(arrow.from) && arrow.to !== undefined && forbidden(arrow.to))
    .map((arrow) => `${arrow.from}:${arrow.line} imports "${arrow.specifier}"`);
}

/** Fails listing every offending arrow (printed as well, one a line). */
function expectNone(rule: string, offenders: string[]): void {
  if (offenders.length > 0) console.error(`${rule}:\n${offenders.map((line) => `  ${line}`).join("\n")}`);
  expect(offenders, rule).toEqual([]);
}

describe("importSpecifiers", () => {
  it("reads every import form, and none written in a comment, a string, a template literal or a regular expression", () => {
    const source = [
      'import { a } from "../engine/a.js";',
      'import type { B } from "../../server/b.js";',
      "import C, {\n  d,\n  type E,\n} from './c.js';",
      'import * as f from "node:fs";',
      'import "./side-effect.js";',
      'export { g as h } from "./g.js";',
      'export type { I } from "./i.js";',
      'export * from "./all.js";',
      'export { local };',
      'export const from = "./not-an-import.js";',
      'const j = await import("../engine/j.js");',
      'type K = import("./k.js").K;',
      'const worker = new URL("./worker.js", import.meta.url);',
      'const url = import.meta.url;',
      '// import { z } from "./commented.js";',
      '/* export * from "./block-commented.js"; */',
      'const text = \'import { y } from "./in-a-string.js"\';',
      'const template = `import("./in-a-template.js") ${await import("./in-an-expression.js")}`;',
      'const pattern = /from "\\.\\/in-a-regex.js"/;',
      'const jsx = <p>Don\'t stop</p>;',
      'import { after } from "./after-an-apostrophe.js";',
    ].join("\n");
    expect(importSpecifiers(source).map(({ specifier, kind }) => `${kind} ${specifier}`)).toEqual([
      "import ../engine/a.js", "import ../../server/b.js", "import ./c.js", "import node:fs", "import ./side-effect.js",
      "export ./g.js", "export ./i.js", "export ./all.js", "dynamic ../engine/j.js", "dynamic ./k.js", "url ./worker.js",
      "dynamic ./in-an-expression.js", "import ./after-an-apostrophe.js",
    ]);
    expect(importSpecifiers('\n\nimport { a } from "./a.js";')[0]!.line).toBe(3);
  });

  it("resolves relative specifiers only", () => {
    expect(resolveSpecifier("/repo/server/platform/routes.ts", "../dashboard/api-headers.js")).toBe("/repo/server/dashboard/api-headers.js");
    expect(resolveSpecifier("/repo/server/platform/routes.ts", "vitest")).toBeUndefined();
    expect(resolveSpecifier("/repo/server/platform/routes.ts", "node:fs")).toBeUndefined();
  });
});

describe("the layering of loom's sources", () => {
  it("reads the sources and their imports", () => {
    // A guard against a walk or a parser that finds nothing and so passes every rule.
    expect(ARROWS.filter((arrow) => arrow.from.startsWith("kernels/")).length).toBeGreaterThan(50);
    expect(ARROWS.some((arrow) => arrow.from.startsWith("kernels/") && arrow.from.endsWith(".as.ts"))).toBe(true);
    expect(ARROWS.filter((arrow) => arrow.from.startsWith("engine/")).length).toBeGreaterThan(500);
    expect(ARROWS.filter((arrow) => arrow.from.startsWith("server/platform/")).length).toBeGreaterThan(200);
    expect(ARROWS.some((arrow) => arrow.from === "server/cli/serve-command.ts" && arrow.to?.startsWith("server/dashboard/"))).toBe(true);
    for (const file of ASSEMBLY_FILES) expect(ARROWS.some((arrow) => arrow.from === file), file).toBe(true);
  });

  it("kernels/ imports nothing from engine/, server/ or anything else outside kernels/", () => {
    expectNone("kernels/ imports from outside kernels/ (kernels <- engine <- server)", offendingWhere("kernels/", (target) => !within(target, "kernels/")));
  });

  it("engine/ imports nothing from server/", () => {
    expectNone("engine/ imports server/", offending("engine/", ["server/"]));
  });

  it("server/platform/ imports nothing from server/dashboard/, server/runs/ or server/machines/", () => {
    expectNone("server/platform/ imports a surface built on it", offending("server/platform/", ["server/dashboard/", "server/runs/", "server/machines/"]));
  });

  it("server/dashboard/ is imported only by the server's assembly (and by itself and the benchmarks)", () => {
    const allowed = (file: string) => ASSEMBLY_FILES.includes(file) || within(file, "server/dashboard/") || within(file, "bench/");
    expectNone("server/dashboard/ imported outside the server's assembly", offending("", ["server/dashboard/"], allowed));
  });
});
