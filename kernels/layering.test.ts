// The dependency rule kernels <- engine <- server: nothing under kernels/ (TypeScript, AssemblyScript *.as.ts, plain
// JavaScript) may import from a folder above it. Every relative specifier of an import, re-export, dynamic import(),
// require() or new URL(..., import.meta.url) must resolve inside kernels/; packages and node: builtins are fine.
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const kernelsDir = dirname(fileURLToPath(import.meta.url));

/** Every source file under `dir`: .ts (including .as.ts), .js and .mjs. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|js|mjs)$/.test(entry.name) ? [path] : [];
  });
}

// `from "x"` (import and export), side-effect `import "x"`, `import("x")`, `require("x")`, `new URL("x", ...)`.
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*|\bnew\s+URL\s*\(\s*)["'`]([^"'`]+)["'`]/g;

/** The module specifiers `source` names. */
function importSpecifiers(source: string): string[] {
  return Array.from(source.matchAll(SPECIFIER), (match) => match[1]);
}

/** The relative specifiers of `file` (under kernels/) that resolve outside kernels/, as "file: specifier". */
function escapes(file: string, source: string): string[] {
  return importSpecifiers(source)
    .filter((specifier) => specifier.startsWith("."))
    .filter((specifier) => {
      const target = relative(kernelsDir, resolve(dirname(file), specifier));
      return target === ".." || target.startsWith(`..${sep}`);
    })
    .map((specifier) => `${relative(kernelsDir, file)}: ${specifier}`);
}

describe("kernels/ layering", () => {
  it("finds the specifiers of every import form", () => {
    const source = [
      'import { a } from "../engine/a.js";',
      'import type { B } from "../../server/b.js";',
      'export { c as d } from "./c.js";',
      'import "./side-effect.js";',
      'const e = await import("../engine/e.js");',
      'new Worker(new URL("./worker.js", import.meta.url));',
      "import {\n  f,\n  g,\n} from 'node:fs';",
    ].join("\n");
    expect(importSpecifiers(source)).toEqual([
      "../engine/a.js", "../../server/b.js", "./c.js", "./side-effect.js", "../engine/e.js", "./worker.js", "node:fs",
    ]);
    expect(escapes(join(kernelsDir, "matmul", "matmul.ref.ts"), 'import { x } from "../../engine/model/x.js";')).toHaveLength(1);
    expect(escapes(join(kernelsDir, "matmul", "matmul.ref.ts"), 'import { x } from "../formats/q8_0.js";')).toEqual([]);
  });

  it("no file under kernels/ imports from engine/, server/ or anything else above kernels/", () => {
    // This file is left out: its own examples name engine/ and server/ on purpose.
    const files = sourceFiles(kernelsDir).filter((file) => file !== fileURLToPath(import.meta.url));
    expect(files.some((file) => file.endsWith(".as.ts"))).toBe(true);
    const violations = files.flatMap((file) => escapes(file, readFileSync(file, "utf8")));
    expect(violations, "kernels must not depend on the layers above them (kernels <- engine <- server)").toEqual([]);
  });
});
