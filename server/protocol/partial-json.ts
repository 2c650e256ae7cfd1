// Reads JSON that generation cut short: a tool call's arguments when max_tokens or a stop sequence ended the output
// inside them. The value keeps what was written completely and drops a trailing piece that was not (a partial string,
// number or literal, a key without its value), with the open brackets closed. These are the rules by which the
// Anthropic SDK reads the `input_json_delta`s of a tool_use block it streams, so a cut call's `input` is the same
// whether the response was streamed or not.

/** A container being read: which bracket closes it, and (in an object) whether the next string is a key. */
interface OpenContainer {
  close: "}" | "]";
  nextIsKey: boolean;
}

const LITERALS = new Set(["true", "false", "null"]);
const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?$/;
const NUMBER_START = /^-?\d*(?:\.\d*)?(?:[eE][-+]?\d*)?$/;

/** Whether `word` may be the start of a number or literal. */
function startsValue(word: string): boolean {
  return word !== "" && (NUMBER_START.test(word) || [...LITERALS].some((literal) => literal.startsWith(word)));
}

/**
 * The value of `text`, a prefix of one JSON value, as far as it was written (see the file comment); undefined when
 * nothing complete was written yet, or `text` is not the start of JSON.
 */
export function parsePartialJson(text: string): unknown {
  const closed = closePartialJson(text);
  if (closed === undefined) return undefined;
  try {
    return JSON.parse(closed);
  } catch {
    return undefined;
  }
}

/**
 * `text` up to its last complete point, with the brackets still open there closed; undefined when there is none, or
 * when a bracket or character shows `text` is not the start of JSON.
 */
export function closePartialJson(text: string): string | undefined {
  const open: OpenContainer[] = [];
  /** The last complete point: where it is, and the brackets open there (kept as indexes: arguments can be long). */
  let last: { end: number; closers: string } | undefined;
  const markComplete = (end: number) => {
    last = { end, closers: open.map((container) => container.close).reverse().join("") };
  };
  const complete = () => (last ? text.slice(0, last.end) + last.closers : undefined);
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    const top = open.at(-1);
    if (c === " " || c === "\t" || c === "\n" || c === "\r") {
      i++;
    } else if (c === "{" || c === "[") {
      open.push({ close: c === "{" ? "}" : "]", nextIsKey: c === "{" });
      markComplete(++i);
    } else if (c === "}" || c === "]") {
      if (top?.close !== c) return undefined; // not JSON
      open.pop();
      markComplete(++i);
    } else if (c === ":" || c === ",") {
      if (top) top.nextIsKey = c === "," && top.close === "}";
      i++;
    } else if (c === '"') {
      const end = stringEnd(text, i);
      if (end === undefined) return complete(); // a string cut short
      i = end;
      const isKey = top?.nextIsKey === true;
      if (top) top.nextIsKey = false;
      if (!isKey) markComplete(i);
    } else {
      const word = /^[-+.\w]+/.exec(text.slice(i))?.[0] ?? "";
      i += word.length;
      // A number that runs to the end may go on, and a literal may be cut short: neither is complete yet.
      if (i === text.length && !LITERALS.has(word)) return startsValue(word) ? complete() : undefined;
      if (!LITERALS.has(word) && !NUMBER.test(word)) return undefined; // not JSON
      markComplete(i);
    }
  }
  return complete();
}

/** The index just after the string that opens at `start`, or undefined when it does not close in `text`. */
function stringEnd(text: string, start: number): number | undefined {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === '"') return i + 1;
  }
  return undefined;
}
