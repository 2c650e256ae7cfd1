// The module specifiers a TypeScript or TSX source names, for tests that check which folder may import which
// (server/layering.test.ts). A small tokenizer, not a parser: it skips comments, strings, template literals and
// regular-expression literals, so an import written inside one of them does not count, and reads the specifiers of
// `import ... from "x"`, `import "x"`, `import type ... from "x"`, `export ... from "x"`, `import("x")`,
// `require("x")` and `new URL("x", import.meta.url)` (a worker's or a file's path). JSX text is read as code: an
// apostrophe in it spoils no more than its line, and an import-like phrase written in it would count. Plain code, no
// test-runner imports.
import { dirname, resolve } from "node:path";

/** One module specifier a source names. */
export interface ImportSpecifier {
  /** The specifier as written: `"./routes.js"`, `"node:fs"`, `"vitest"`. */
  specifier: string;
  /**
   * How it is named: a static `import` (types included), an `export ... from`, a call (`import()`, `require()`), or
   * `new URL("x", import.meta.url)`.
   */
  kind: "import" | "export" | "dynamic" | "url";
  /** Its line in the source, counted from 1. */
  line: number;
}

/** A token of the scan: a word, a string literal's value, or one punctuation character. */
interface Token {
  type: "word" | "string" | "punct";
  value: string;
  line: number;
}

/** Words after which a `/` starts a regular expression rather than dividing. */
const REGEX_AFTER_WORDS = new Set(["return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw", "case", "do", "else", "yield", "await"]);

/**
 * The tokens of a source: words, string literals (their values; a quote that meets a line end before its closing
 * quote, such as an apostrophe in JSX text, is taken as punctuation) and punctuation. Comments, template literals'
 * text and regular-expression literals are skipped; a template literal's `${...}` expressions are tokenized.
 */
function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  /** For each `{` open now: whether it is a template literal's `${` (its `}` resumes the template's text). */
  const braces: boolean[] = [];
  let line = 1;
  let i = 0;
  const n = source.length;

  /** Skips a template literal's text from `i` (just after its opening backtick or a closing `}`) to its end or next `${`. */
  const templateText = (): void => {
    while (i < n) {
      const c = source[i]!;
      if (c === "\\") { if (source[i + 1] === "\n") line++; i += 2; continue; }
      if (c === "\n") line++;
      if (c === "`") { i++; return; }
      if (c === "$" && source[i + 1] === "{") { i += 2; braces.push(true); return; }
      i++;
    }
  };
  /** Whether a `/` at this point starts a regular expression (by the token before it). */
  const regexAllowed = (): boolean => {
    const last = tokens[tokens.length - 1];
    if (!last) return true;
    if (last.type === "word") return REGEX_AFTER_WORDS.has(last.value);
    if (last.type === "string") return false;
    return !")]}".includes(last.value);
  };

  while (i < n) {
    const c = source[i]!;
    if (c === "\n") { line++; i++; continue; }
    if (c === " " || c === "\t" || c === "\r") { i++; continue; }
    if (c === "/" && source[i + 1] === "/") {
      while (i < n && source[i] !== "\n") i++;
      continue;
    }
    if (c === "/" && source[i + 1] === "*") {
      const end = source.indexOf("*/", i + 2);
      const stop = end < 0 ? n : end + 2;
      for (let k = i; k < stop; k++) if (source[k] === "\n") line++;
      i = stop;
      continue;
    }
    if (c === "'" || c === '"') {
      let k = i + 1;
      let value = "";
      let closed = false;
      while (k < n) {
        const d = source[k]!;
        if (d === "\\") { value += source[k + 1] ?? ""; k += 2; continue; }
        if (d === "\n") break;
        if (d === c) { closed = true; break; }
        value += d;
        k++;
      }
      if (closed) {
        tokens.push({ type: "string", value, line });
        i = k + 1;
      } else {
        tokens.push({ type: "punct", value: c, line });
        i++;
      }
      continue;
    }
    if (c === "`") { i++; templateText(); continue; }
    if (c === "{") { braces.push(false); tokens.push({ type: "punct", value: c, line }); i++; continue; }
    if (c === "}") {
      if (braces.pop() === true) { i++; templateText(); continue; }
      tokens.push({ type: "punct", value: c, line });
      i++;
      continue;
    }
    if (c === "/" && regexAllowed()) {
      let k = i + 1;
      let inClass = false;
      while (k < n && source[k] !== "\n") {
        const d = source[k]!;
        if (d === "\\") { k += 2; continue; }
        if (d === "[") inClass = true;
        else if (d === "]") inClass = false;
        else if (d === "/" && !inClass) break;
        k++;
      }
      if (k < n && source[k] === "/") {
        k++;
        while (k < n && /[a-z]/i.test(source[k]!)) k++;
        tokens.push({ type: "punct", value: "/regex/", line });
        i = k;
        continue;
      }
      tokens.push({ type: "punct", value: c, line });
      i++;
      continue;
    }
    if (/[A-Za-z_$]/.test(c)) {
      let k = i + 1;
      while (k < n && /[\w$]/.test(source[k]!)) k++;
      tokens.push({ type: "word", value: source.slice(i, k), line });
      i = k;
      continue;
    }
    if (/[0-9]/.test(c)) {
      let k = i + 1;
      while (k < n && /[\w.]/.test(source[k]!)) k++;
      tokens.push({ type: "word", value: source.slice(i, k), line });
      i = k;
      continue;
    }
    tokens.push({ type: "punct", value: c, line });
    i++;
  }
  return tokens;
}

/**
 * The module specifiers `source` names, in order: static imports and re-exports (`from "x"`, `import "x"`), calls
 * of `import("x")` and `require("x")` with a string literal (a computed specifier cannot be read and is not listed),
 * and `new URL("x", import.meta.url)`.
 */
export function importSpecifiers(source: string): ImportSpecifier[] {
  const tokens = tokenize(source);
  const found: ImportSpecifier[] = [];
  const at = (k: number): Token | undefined => tokens[k];
  const isPunct = (k: number, value: string) => at(k)?.type === "punct" && at(k)!.value === value;
  const isWord = (k: number, value: string) => at(k)?.type === "word" && at(k)!.value === value;

  for (let k = 0; k < tokens.length; k++) {
    const token = tokens[k]!;
    if (token.type !== "word" || isPunct(k - 1, ".")) continue;
    if ((token.value === "import" || token.value === "require") && isPunct(k + 1, "(")) {
      const argument = at(k + 2);
      if (argument?.type === "string" && (isPunct(k + 3, ")") || isPunct(k + 3, ","))) found.push({ specifier: argument.value, kind: "dynamic", line: argument.line });
      continue;
    }
    if (token.value === "new" && isWord(k + 1, "URL") && isPunct(k + 2, "(") && at(k + 3)?.type === "string" && isPunct(k + 4, ",")
      && isWord(k + 5, "import") && isPunct(k + 6, ".") && isWord(k + 7, "meta") && isPunct(k + 8, ".") && isWord(k + 9, "url")) {
      found.push({ specifier: at(k + 3)!.value, kind: "url", line: at(k + 3)!.line });
      continue;
    }
    if (token.value !== "import" && token.value !== "export") continue;
    if (isPunct(k + 1, ".") || isPunct(k + 1, "(")) continue; // import.meta; a call was handled above
    const kind = token.value;
    const next = at(k + 1);
    if (kind === "import" && next?.type === "string") {
      found.push({ specifier: next.value, kind, line: next.line });
      continue;
    }
    // An export names a module only as `export * ...` or `export [type] { ... } from`.
    if (kind === "export") {
      const first = isWord(k + 1, "type") ? k + 2 : k + 1;
      if (!isPunct(first, "*") && !isPunct(first, "{")) continue;
    }
    // Up to `from "x"`, or the statement's end: a `;`, or a word that starts another statement after a closing `}`.
    let depth = 0;
    for (let m = k + 1; m < tokens.length; m++) {
      const t = tokens[m]!;
      if (t.type === "punct") {
        if (t.value === "{") depth++;
        else if (t.value === "}") depth--;
        else if (t.value === ";" || t.value === "(" || t.value === "=") break;
        continue;
      }
      if (depth === 0 && t.type === "word" && t.value === "from" && at(m + 1)?.type === "string") {
        found.push({ specifier: at(m + 1)!.value, kind, line: at(m + 1)!.line });
        break;
      }
      if (depth === 0 && t.type === "word" && (t.value === "import" || t.value === "export")) break;
    }
  }
  return found;
}

/**
 * Where a relative specifier of the file at `fromFile` points: an absolute path (with the extension written, so
 * `./routes.js` gives `.../routes.js`); undefined for a package or built-in (`vitest`, `node:fs`).
 */
export function resolveSpecifier(fromFile: string, specifier: string): string | undefined {
  if (specifier !== "." && specifier !== ".." && !specifier.startsWith("./") && !specifier.startsWith("../")) return undefined;
  return resolve(dirname(fromFile), specifier);
}
