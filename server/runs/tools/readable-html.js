// @ts-check
// HTML to the text a model reads, in one pass over htmlparser2's tokenizer with no tree and no recursion: linear in
// the page's length whatever its nesting. Plain JavaScript: html-text-worker.js runs it, and workers cannot load
// TypeScript when tests run the sources.
//
// Kept: the words (whitespace collapsed, <pre> as it is), paragraphs and headings apart, list items with " * " or
// " 1. ", blockquotes with "> ", table rows one per line with cells apart by " | ", link text without its URL, and the
// first <title> outside SVG/MathML. Left out: head, script, style, nav, forms' controls, images, SVG, iframes, comments.
import { Tokenizer } from "htmlparser2";

/** Open elements deeper than this are read as if flat: their text is kept, their structure ignored. */
export const MAX_DEPTH = 1024;
/** How many containers (lists, blockquotes) indent a line at most, so that deep nesting cannot inflate the text. */
const MAX_INDENT_LEVELS = 8;
/** How far below the top an implied end (a new <li> closing the last one) looks for what it closes. */
const IMPLIED_END_WINDOW = 16;

/** Elements whose content is not text a reader sees. */
const SKIPPED = new Set(["head", "noscript", "template", "nav", "picture", "svg", "math", "iframe", "object", "embed", "button", "select", "audio", "video", "canvas", "map", "datalist"]);
/** Elements the tokenizer reads as raw text up to their end tag: their text is skipped (a title's kept apart). */
const RAW = new Set(["script", "style", "title", "textarea", "xmp"]);
/** Elements without content or end tag. */
const VOID = new Set(["area", "base", "basefont", "bgsound", "br", "col", "command", "embed", "frame", "hr", "img", "input", "isindex", "keygen", "link", "meta", "param", "source", "track", "wbr"]);
/** Line breaks around block elements: 2 leaves a blank line, 1 starts a new line. */
const BREAKS = new Map([
  ...["p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "menu", "blockquote", "pre", "table", "hr"].map((name) => /** @type {const} */ ([name, 2])),
  ...["div", "section", "article", "main", "header", "footer", "aside", "address", "figure", "figcaption", "form", "fieldset", "legend",
    "details", "summary", "dl", "dt", "dd", "li", "tr", "caption", "center", "hgroup", "search", "dialog", "body", "html"].map((name) => /** @type {const} */ ([name, 1])),
]);
/** Opening one of these closes an open <p> (HTML's implied end tags). */
const CLOSES_P = new Set(["address", "article", "aside", "blockquote", "details", "dialog", "div", "dl", "fieldset", "figcaption", "figure", "footer", "form",
  "h1", "h2", "h3", "h4", "h5", "h6", "header", "hgroup", "hr", "main", "menu", "nav", "ol", "p", "pre", "section", "table", "ul", "li", "dd", "dt"]);
/** What an opening tag closes, and where the search for it stops. */
const IMPLIED_ENDS = new Map(/** @type {[string, { closes: Set<string>, stops: Set<string> }][]} */ ([
  ["p", { closes: new Set(["p"]), stops: new Set(["table", "td", "th", "caption", "button", "template", "object"]) }],
  ["li", { closes: new Set(["li"]), stops: new Set(["ul", "ol", "menu", "table"]) }],
  ["dt", { closes: new Set(["dt", "dd"]), stops: new Set(["dl", "table"]) }],
  ["dd", { closes: new Set(["dt", "dd"]), stops: new Set(["dl", "table"]) }],
  ["tr", { closes: new Set(["tr"]), stops: new Set(["table"]) }],
  ["td", { closes: new Set(["td", "th"]), stops: new Set(["tr", "table"]) }],
  ["th", { closes: new Set(["td", "th"]), stops: new Set(["tr", "table"]) }],
  ["thead", { closes: new Set(["thead", "tbody", "tfoot"]), stops: new Set(["table"]) }],
  ["tbody", { closes: new Set(["thead", "tbody", "tfoot"]), stops: new Set(["table"]) }],
  ["tfoot", { closes: new Set(["thead", "tbody", "tfoot"]), stops: new Set(["table"]) }],
]).map(([name, rule]) => [name, { ...rule, names: [...rule.closes] }]));
/** What may stay inside <head>; anything else there means the author left out </head> and <body>. */
const HEAD_CONTENT = new Set(["head", "meta", "link", "title", "style", "script", "base", "noscript", "template"]);
const WHITESPACE = /[ \t\n\f\r]+/;

/**
 * @typedef {object} OpenElement
 * @property {string} name
 * @property {boolean} skipped
 * @property {boolean} indents  pushed a part of the line prefix
 * @property {number} items  list items so far (lists) or cells so far (table rows)
 * @property {number} start  the first number of an ordered list
 */

/**
 * The title (undefined when none) and readable text of an HTML document or fragment.
 * @param {string} html
 * @returns {{ title: string | undefined, text: string }}
 */
export function extractReadableHtml(html) {
  /** @type {OpenElement[]} */
  const stack = [];
  /** How many elements of each name are open, so that an end tag with nothing to close costs nothing. */
  /** @type {Map<string, number>} */
  const openCounts = new Map();
  let skipDepth = 0; // open skipped elements
  let preDepth = 0;
  let cellDepth = 0; // open table cells: inside one, line breaks are spaces, so that a row stays on one line
  let itemDepth = 0; // open list items
  let foreignDepth = 0; // open svg and math
  /** @type {string | undefined} */
  let raw; // the raw-text element being read
  /** @type {string[] | undefined} */
  let titleParts;
  /** @type {string | undefined} */
  let title;
  let tagName = "";
  /** @type {OpenElement | undefined} */
  let opened; // the element whose start tag is being read (its attributes)
  let attributeName = "";
  let attributeValue = "";
  let preStartsLine = false; // a newline right after <pre> is not content

  // The text so far, and what is owed before the next word (line breaks, a space, a list item's marker).
  let out = ""; // V8 builds this as a rope: cheaper than an array of small strings and a join
  let written = false;
  let trailingNewlines = 0;
  let owedBreaks = 0;
  let owedSpace = false;
  /** @type {string | undefined} */
  let marker;
  /** The indent of a line at each level of indenting containers: [""] at the top, then one string per level. */
  const indents = [""];
  let indentLevels = 0; // containers that indent, counted beyond MAX_INDENT_LEVELS too
  let indent = "";
  let outerIndent = ""; // the indent without its innermost part, where a list item's marker goes

  /** @param {number} count */
  const lineBreak = (count) => {
    if (cellDepth > 0) owedSpace = true;
    else if (count > owedBreaks) owedBreaks = count;
  };
  /** Ends the line and starts the next one with its indent, when breaks are owed or nothing was written yet. */
  const startLine = () => {
    if (written) {
      const wanted = Math.min(owedBreaks, 2);
      if (wanted > trailingNewlines) {
        out += "\n".repeat(wanted - trailingNewlines);
        trailingNewlines = wanted;
      }
    }
    owedBreaks = 0;
    if (!written || trailingNewlines > 0) {
      // A nested item's marker starts where its parent item's text does: "    * " under " 1. ".
      out += marker === undefined ? indent : outerIndent.endsWith(" ") ? outerIndent + marker.trimStart() : outerIndent + marker;
      marker = undefined;
      trailingNewlines = 0;
      owedSpace = false;
    }
  };
  /** @param {string} word */
  const write = (word) => {
    if (owedSpace && written && trailingNewlines === 0 && owedBreaks === 0) out += " ";
    startLine();
    out += word;
    written = true;
    owedSpace = false;
  };
  /** @param {string} text */
  const writeText = (text) => {
    if (text === "") return;
    if (preDepth > 0 && cellDepth === 0) {
      const lines = text.replace(/\r\n?/g, "\n").split("\n");
      if (preStartsLine && lines[0] === "" && lines.length > 1) lines.shift();
      preStartsLine = false;
      lines.forEach((line, index) => {
        if (index > 0 && written && trailingNewlines < 2) {
          out += "\n";
          trailingNewlines++;
        }
        if (line !== "") write(line);
      });
      return;
    }
    const words = text.split(WHITESPACE);
    if (words[0] === "") owedSpace = true;
    for (let index = 0; index < words.length; index++) {
      const word = words[index];
      if (word === "") continue;
      if (index > 0) owedSpace = true;
      write(word);
    }
    if (words.length > 1 && words[words.length - 1] === "") owedSpace = true;
  };

  /** @param {OpenElement} element */
  const close = (element) => {
    const count = (openCounts.get(element.name) ?? 1) - 1;
    openCounts.set(element.name, count);
    if (element.skipped) skipDepth--;
    if (element.indents) {
      indentLevels--;
      if (indentLevels < MAX_INDENT_LEVELS) {
        indents.pop();
        indent = indents[indents.length - 1];
        outerIndent = indents[Math.max(0, indents.length - 2)];
      }
    }
    switch (element.name) {
      case "pre": preDepth--; break;
      case "td": case "th": cellDepth--; break;
      case "li":
        itemDepth--;
        marker = undefined; // an item without text
        break;
      case "svg": case "math": foreignDepth--; break;
    }
    const breaks = BREAKS.get(element.name);
    if (breaks !== undefined) lineBreak(element.name === "ul" || element.name === "ol" || element.name === "menu" ? (itemDepth > 0 ? 1 : 2) : breaks);
  };
  /** Closes the open elements from the top down to `index`, that one included. @param {number} index */
  const closeDownTo = (index) => {
    while (stack.length > index) close(/** @type {OpenElement} */ (stack.pop()));
  };
  /**
   * The index of the nearest open element named in `names`, looking at most `window` elements down and not past one
   * named in `stops`; -1 when none.
   * @param {Set<string>} names @param {Set<string>} stops @param {number} window
   */
  const findOpen = (names, stops, window) => {
    for (let index = stack.length - 1, seen = 0; index >= 0 && seen < window; index--, seen++) {
      const name = stack[index].name;
      if (names.has(name)) return index;
      if (stops.has(name)) return -1;
    }
    return -1;
  };
  /** @param {string} name */
  const isOpen = (name) => (openCounts.get(name) ?? 0) > 0;

  /** @param {string} name */
  const openElement = (name) => {
    // Content inside <head> means the author left out </head> and <body>: the head ends there.
    if (stack.at(-1)?.name === "head" && !HEAD_CONTENT.has(name)) closeDownTo(stack.length - 1);
    if (CLOSES_P.has(name) && isOpen("p")) {
      const rule = /** @type {{ closes: Set<string>, stops: Set<string> }} */ (IMPLIED_ENDS.get("p"));
      const index = findOpen(rule.closes, rule.stops, IMPLIED_END_WINDOW);
      if (index !== -1) closeDownTo(index);
    }
    const rule = IMPLIED_ENDS.get(name);
    if (rule !== undefined && name !== "p" && rule.names.some(isOpen)) {
      const index = findOpen(rule.closes, rule.stops, IMPLIED_END_WINDOW);
      if (index !== -1) closeDownTo(index);
    }

    const breaks = BREAKS.get(name);
    if (name === "br") {
      // Ends the line; on a line still empty, leaves a blank one.
      if (skipDepth > 0 || !written) return undefined;
      if (cellDepth > 0) owedSpace = true;
      else owedBreaks = owedBreaks === 0 && trailingNewlines === 0 ? 1 : Math.min(Math.max(owedBreaks, trailingNewlines) + 1, 2);
      return undefined;
    }
    if (name === "hr") {
      lineBreak(2);
      if (skipDepth === 0 && cellDepth === 0) write("---");
      lineBreak(2);
      return undefined;
    }
    if (VOID.has(name)) return undefined;
    if (breaks !== undefined) lineBreak(name === "ul" || name === "ol" || name === "menu" ? (itemDepth > 0 ? 1 : 2) : breaks);
    if (stack.length >= MAX_DEPTH) return undefined;

    /** @type {OpenElement} */
    const element = { name, skipped: SKIPPED.has(name), indents: false, items: 0, start: 1 };
    stack.push(element);
    openCounts.set(name, (openCounts.get(name) ?? 0) + 1);
    if (element.skipped) skipDepth++;
    switch (name) {
      case "pre":
        preDepth++;
        preStartsLine = true;
        break;
      case "svg": case "math": foreignDepth++; break;
      case "td": case "th": {
        const row = stack.at(-2);
        if (row?.name === "tr" && row.items++ > 0 && skipDepth === 0 && cellDepth === 0) {
          owedSpace = true;
          write("|");
          owedSpace = true;
        }
        cellDepth++;
        break;
      }
      case "li": {
        itemDepth++;
        const list = stack.at(-2);
        const ordered = list?.name === "ol";
        const number = ordered ? list.start + list.items : 0;
        if (list !== undefined) list.items++;
        const itemMarker = ordered ? ` ${number}. ` : " * ";
        marker = cellDepth > 0 || skipDepth > 0 ? undefined : itemMarker;
        pushIndent(element, ordered ? " ".repeat(itemMarker.length) : "   ");
        break;
      }
      case "blockquote": pushIndent(element, "> "); break;
    }
    return element;
  };
  /** @param {OpenElement} element @param {string} part */
  const pushIndent = (element, part) => {
    element.indents = true;
    indentLevels++;
    if (indentLevels <= MAX_INDENT_LEVELS) {
      outerIndent = indent;
      indent += part;
      indents.push(indent);
    }
  };

  const slice = (/** @type {number} */ start, /** @type {number} */ end) => html.slice(start, end);
  /** @param {string} text */
  const onText = (text) => {
    if (raw !== undefined) {
      if (raw === "title" && titleParts !== undefined) titleParts.push(text);
      return;
    }
    if (skipDepth === 0) writeText(text);
  };
  const tokenizer = new Tokenizer({ decodeEntities: true }, {
    ontext: (start, end) => onText(slice(start, end)),
    ontextentity: (codePoint) => onText(String.fromCodePoint(codePoint)),
    onopentagname: (start, end) => {
      tagName = slice(start, end).toLowerCase();
      opened = undefined;
      if (RAW.has(tagName)) {
        raw = tagName;
        if (tagName === "title" && title === undefined && titleParts === undefined && foreignDepth === 0) titleParts = [];
        return;
      }
      opened = openElement(tagName);
    },
    onattribname: (start, end) => {
      attributeName = opened?.name === "ol" ? slice(start, Math.min(end, start + 16)).toLowerCase() : "";
      attributeValue = "";
    },
    onattribdata: (start, end) => {
      if (attributeName === "start") attributeValue += slice(start, Math.min(end, start + 16));
    },
    onattribentity: () => {},
    onattribend: () => {
      if (opened !== undefined && attributeName === "start") {
        const start = Number.parseInt(attributeValue.trim(), 10);
        if (Number.isSafeInteger(start)) opened.start = start;
      }
      attributeName = "";
    },
    onopentagend: () => {
      opened = undefined;
    },
    onselfclosingtag: () => {
      // The tokenizer reads <script/> and the like as ended; in SVG and MathML any element may close itself.
      if (raw === tagName) finishRaw();
      else if (opened !== undefined && foreignDepth > 0 && stack.at(-1) === opened) close(/** @type {OpenElement} */ (stack.pop()));
      opened = undefined;
    },
    onclosetag: (start, end) => {
      const name = slice(start, end).toLowerCase();
      if (raw !== undefined) {
        if (name === raw) finishRaw();
        return;
      }
      if (name === "br") return void openElement("br");
      if (isOpen(name)) {
        for (let index = stack.length - 1; index >= 0; index--) {
          if (stack[index].name === name) {
            closeDownTo(index);
            return;
          }
        }
      }
      if (name === "p" && skipDepth === 0) lineBreak(2); // </p> with no <p>: an empty paragraph
    },
    oncdata: () => {},
    oncomment: () => {},
    ondeclaration: () => {},
    onprocessinginstruction: () => {},
    onend: () => {},
  });
  const finishRaw = () => {
    if (raw === "title" && titleParts !== undefined) {
      const text = titleParts.join("");
      if (text.trim() !== "") title = text; // else a later <title> may still give one
      titleParts = undefined;
    }
    raw = undefined;
  };

  tokenizer.write(html);
  tokenizer.end();
  if (raw === "title") finishRaw();
  const titleText = (title ?? "").replace(/\s+/g, " ").trim();
  return { title: titleText === "" ? undefined : titleText, text: out.trimEnd() };
}
