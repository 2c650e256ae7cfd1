// A strict reader for the YAML subset deploy/kubernetes is written in: block mappings and sequences, flow sequences of
// scalars, `{}` and `[]`, quoted and plain scalars, comments and `---`. The repository installs no YAML parser, so the
// manifest tests use this one. It refuses everything else (anchors, tags, block and multi-line scalars, flow
// mappings) and every plain scalar that YAML 1.1 (Kubernetes' parser, go-yaml) and YAML 1.2 read differently (`yes`,
// `0644`, `1e3`, `1_000`, `12:30`, dates): such values must be quoted, so what the tests read is what the cluster reads.

export type YamlValue = null | boolean | number | string | YamlValue[] | { [key: string]: YamlValue };

export class YamlSubsetError extends Error {}

interface Line {
  indent: number;
  text: string;
  number: number;
}

/** Every non-empty document of `source`, in order. */
export function parseDocuments(source: string, name = "<yaml>"): YamlValue[] {
  const documents: Line[][] = [[]];
  source.replace(/^\uFEFF/, "").split(/\r?\n/).forEach((raw, index) => {
    const fail = (message: string): never => { throw new YamlSubsetError(`${name}:${index + 1}: ${message}`); };
    const trimmed = raw.trim();
    if (trimmed === "" || trimmed.startsWith("#")) return;
    if (/^---(\s|$)/.test(raw)) {
      if (!/^---\s*(#.*)?$/.test(raw)) fail("content after --- is not supported");
      documents.push([]);
      return;
    }
    const indentation = /^[ \t]*/.exec(raw)![0];
    if (indentation.includes("\t")) fail("tab in indentation");
    if (/^(\.\.\.|%)/.test(trimmed)) fail(`'${trimmed.slice(0, 3)}' (document end or directive) is not supported`);
    documents[documents.length - 1]!.push({ indent: indentation.length, text: raw.trimEnd().slice(indentation.length), number: index + 1 });
  });
  return documents.filter((lines) => lines.length > 0).map((lines) => new Reader(lines, name).document());
}

const isItem = (text: string) => text === "-" || text.startsWith("- ");

class Reader {
  private at = 0;

  constructor(private readonly lines: Line[], private readonly name: string) {}

  document(): YamlValue {
    const value = this.block(this.lines[0]!.indent);
    const left = this.lines[this.at];
    if (left) this.fail(left, "unexpected indentation");
    return value;
  }

  private fail(line: Line, message: string): never {
    throw new YamlSubsetError(`${this.name}:${line.number}: ${message}`);
  }

  private block(indent: number): YamlValue {
    return isItem(this.lines[this.at]!.text) ? this.sequence(indent) : this.mapping(indent);
  }

  private sequence(indent: number): YamlValue[] {
    const items: YamlValue[] = [];
    for (let line = this.lines[this.at]; line && line.indent === indent && isItem(line.text); line = this.lines[this.at]) {
      const rest = line.text.slice(1).trimStart();
      if (rest === "" || rest.startsWith("#")) {
        this.at++;
        items.push(this.nested(indent, line, false));
      } else if (isItem(rest) || splitKey(rest, (message) => this.fail(line!, message))) {
        // "- key: value" (or "- - x"): the rest is a block that starts at its own column.
        const column = indent + line.text.length - rest.length;
        this.lines[this.at] = { ...line, indent: column, text: rest };
        items.push(this.block(column));
      } else {
        this.at++;
        items.push(inlineValue(rest, (message) => this.fail(line!, message)));
      }
    }
    return items;
  }

  private mapping(indent: number): { [key: string]: YamlValue } {
    const map: { [key: string]: YamlValue } = {};
    for (let line = this.lines[this.at]; line && line.indent === indent; line = this.lines[this.at]) {
      const fail = (message: string) => this.fail(line!, message);
      if (isItem(line.text)) fail("a sequence item where a key was expected");
      const entry = splitKey(line.text, fail) ?? fail("expected 'key: value'");
      if (Object.hasOwn(map, entry.key)) fail(`duplicate key '${entry.key}'`);
      this.at++;
      const value = entry.rest === "" ? this.nested(indent, line, true) : inlineValue(entry.rest, fail);
      // defineProperty: a key such as __proto__ stays an ordinary key.
      Object.defineProperty(map, entry.key, { value, enumerable: true, writable: true, configurable: true });
    }
    return map;
  }

  /** The value on the lines after `owner` (a key or a "-" with nothing after it). */
  private nested(indent: number, owner: Line, ownerIsKey: boolean): YamlValue {
    const next = this.lines[this.at];
    if (next && next.indent > indent) return this.block(next.indent);
    // "key:" followed by "- item" at the key's own indentation (the compact style kubectl writes).
    if (next && ownerIsKey && next.indent === indent && isItem(next.text)) return this.sequence(indent);
    return this.fail(owner, "empty value: write null, {} or [] explicitly");
  }
}

/** `key: rest` (rest trimmed, "" when the value is on the next lines), or undefined when the text is no key. */
function splitKey(text: string, fail: (message: string) => never): { key: string; rest: string } | undefined {
  let key: string;
  let after: number;
  if (text.startsWith('"') || text.startsWith("'")) {
    const quoted = quotedScalar(text, 0, fail);
    if (text[quoted.end] !== ":" || !/^(\s|$)/.test(text.slice(quoted.end + 1))) return undefined;
    key = quoted.value;
    after = quoted.end + 1;
  } else {
    const colon = text.search(/:(\s|$)/);
    if (colon < 0) return undefined;
    const raw = text.slice(0, colon).trimEnd();
    if (raw === "" || /^[-?:,[\]{}#&*!|>'"%@`]/.test(raw) || /\s#/.test(raw)) return undefined;
    const value = plainScalar(raw, fail);
    if (typeof value !== "string") fail(`key '${raw}' is not a string: quote it`);
    key = value as string;
    after = colon + 1;
  }
  const rest = text.slice(after).trim();
  return { key, rest: rest.startsWith("#") ? "" : rest };
}

/** The value written after a key or a "- " on the same line. */
function inlineValue(text: string, fail: (message: string) => never): YamlValue {
  let value: YamlValue;
  let end: number;
  if (text.startsWith('"') || text.startsWith("'")) {
    ({ value, end } = quotedScalar(text, 0, fail));
  } else if (text.startsWith("[")) {
    ({ value, end } = flowSequence(text, fail));
  } else if (text.startsWith("{")) {
    if (!/^\{\s*\}/.test(text)) fail("flow mappings other than {} are not supported");
    ({ value, end } = { value: {}, end: text.indexOf("}") + 1 });
  } else if (/^([&*!|>%@`,\]}]|[-?:](\s|$))/.test(text)) {
    return fail(`'${text[0]}' (anchor, alias, tag, block scalar or reserved indicator) is not supported`);
  } else {
    const raw = text.split(/\s#/)[0]!.trimEnd();
    if (/:(\s|$)/.test(raw)) fail(`'${raw}': a plain value may not contain ': ' (quote it)`);
    return plainScalar(raw, fail);
  }
  if (!/^(\s+#.*)?\s*$/.test(text.slice(end))) fail(`unexpected '${text.slice(end).trim()}' after the value`);
  return value;
}

function quotedScalar(text: string, start: number, fail: (message: string) => never): { value: string; end: number } {
  let i = start + 1;
  if (text[start] === '"') {
    while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
    if (i >= text.length) fail("unterminated double-quoted string (multi-line strings are not supported)");
    try {
      // JSON's escapes mean the same in YAML; YAML-only ones (\x41, \e, a bare line break) are refused.
      return { value: JSON.parse(text.slice(start, i + 1)) as string, end: i + 1 };
    } catch {
      return fail(`${text.slice(start, i + 1)}: only JSON escapes are supported in double-quoted strings`);
    }
  }
  while (i < text.length && !(text[i] === "'" && text[i + 1] !== "'")) i += text[i] === "'" ? 2 : 1;
  if (i >= text.length) fail("unterminated single-quoted string (multi-line strings are not supported)");
  return { value: text.slice(start + 1, i).replaceAll("''", "'"), end: i + 1 };
}

/** `[a, "b", 3]`: scalars only. */
function flowSequence(text: string, fail: (message: string) => never): { value: YamlValue[]; end: number } {
  const items: YamlValue[] = [];
  const skip = (i: number) => { while (text[i] === " ") i++; return i; };
  let i = skip(1);
  if (text[i] === "]") return { value: items, end: i + 1 };
  for (;;) {
    if (i >= text.length) fail("unclosed [...] (it must close on the same line)");
    if (text[i] === '"' || text[i] === "'") {
      const quoted = quotedScalar(text, i, fail);
      items.push(quoted.value);
      i = quoted.end;
    } else {
      let j = i;
      while (j < text.length && text[j] !== "," && text[j] !== "]") j++;
      const raw = text.slice(i, j).trim();
      if (raw === "" || /^([?:&*!|>%@`'"]|-(\s|$))/.test(raw) || /[[\]{}#]|:(\s|$)/.test(raw)) {
        fail(`'${raw}' in [...]: only quoted or simple plain scalars are supported`);
      }
      items.push(plainScalar(raw, fail));
      i = j;
    }
    i = skip(i);
    if (text[i] === "]") return { value: items, end: i + 1 };
    if (text[i] !== ",") return fail(i >= text.length ? "unclosed [...] (it must close on the same line)" : `expected ',' or ']' in [...], got '${text[i]}'`);
    i = skip(i + 1);
    if (text[i] === "]") fail("trailing ',' in [...]");
  }
}

// Plain scalars YAML 1.1 resolves to something other than a string, or to another number than YAML 1.2 does.
const AMBIGUOUS = [
  /^(y|Y|yes|Yes|YES|n|N|no|No|NO|True|TRUE|False|FALSE|on|On|ON|off|Off|OFF|Null|NULL|~|=|<<)$/,
  /^[-+]?[0-9_.]+([eE][-+]?[0-9]+)?$/, // 0644, 1_000, +1, .5, 1., 1e3 (plain decimals were taken before)
  /^[-+]?0[xXoObB][0-9a-fA-F_]+$/,
  /^[-+]?\.(inf|Inf|INF|nan|NaN|NAN)$/,
  /^[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?$/, // base 60
  /^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}/, // timestamps
];

function plainScalar(raw: string, fail: (message: string) => never): YamlValue {
  if (raw === "null") return null;
  if (raw === "true") return true;
  if (raw === "false") return false;
  if (/^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/.test(raw)) {
    const number = Number(raw);
    if (raw.includes(".") || Number.isSafeInteger(number)) return number;
  }
  if (AMBIGUOUS.some((pattern) => pattern.test(raw))) fail(`'${raw}' reads differently in YAML 1.1 and 1.2: quote it (or write true, false, null, or a plain decimal)`);
  return raw;
}
